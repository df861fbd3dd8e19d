/**
 * Who calls the tool gateway (src/http/routes/tools.ts): a runtime token minted from an API key
 * (POST /auth/token), or an OAuth access token of the gateway's authorization server, good only
 * at the resource it was issued for (docs/tool-gateway.md "Signing in by URL"). A refusal's
 * challenge points an MCP client at the protected-resource metadata (RFC 9728).
 */
import type { Context } from 'koa';
import type { RuntimePrincipal } from '../crypto/runtime-tokens';
import { OAuthServer } from '../oauth/authorization-server';
import { beyondScope, FULL_SCOPE } from '../oauth/scopes';
import type { JsonRpcResponse } from '../contracts/mcp';
import { ErrorCode, JsonRpcError, failure } from '../tools/mcp/jsonrpc';
import type { GatewayDeps } from './deps';
import { SERVER_NAME } from './oauth-resource';

export function toolCredentials(deps: Pick<GatewayDeps, 'runtimeTokens' | 'oauth'>) {
  return {
    /**
     * A plain value for a runtime token whose key this process checked within the last second
     * (see RuntimeTokens.verify); an OAuth access token must name `server` (or the whole gateway)
     * as its resource.
     */
    authenticate(ctx: Context, server: string): RuntimePrincipal | undefined | Promise<RuntimePrincipal | undefined> {
      const token = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1];
      if (!token) return undefined;
      if (deps.oauth && OAuthServer.isAccessToken(token)) return deps.oauth.server.verifyAccess(token, deps.oauth.resources.acceptedAt(server));
      return deps.runtimeTokens.verify(token);
    },

    /**
     * A request (one message or a batch) that the OAuth grant's scope does not allow
     * (src/oauth/scopes.ts): answered 403 with RFC 6750's insufficient_scope challenge (MCP's
     * step-up authorization: the scope that would do, and where to sign in again) and a JSON-RPC
     * error naming it. Undefined when the scope allows it, or the caller has none.
     */
    scopeRefusal(principal: RuntimePrincipal, raw: unknown, server: string): { challenge: string; answer: JsonRpcResponse } | undefined {
      const beyond = beyondScope(principal.scope, raw, server);
      if (!beyond) return undefined;
      const metadata = deps.oauth && SERVER_NAME.test(server) ? `, resource_metadata="${deps.oauth.resources.metadataUrlOf(server)}"` : '';
      const message = `insufficient_scope: this token's scope (${principal.scope ?? ''}) does not allow ${beyond.method}; sign in again asking for ${FULL_SCOPE}`;
      return {
        challenge: `Bearer realm="flowgate-tools", error="insufficient_scope", scope="${FULL_SCOPE}"${metadata}`,
        answer: failure(beyond.id, new JsonRpcError(ErrorCode.PERMISSION_DENIED, message, { scope: FULL_SCOPE })),
      };
    },

    /**
     * RFC 6750's challenge, with RFC 9728's pointer to where an MCP client learns how to sign in
     * and the scope to ask for (the MCP authorization spec's scope selection: the one that allows
     * everything the credential may do).
     */
    challenge(ctx: Context, server: string): string {
      const invalid = ctx.get('Authorization') ? ', error="invalid_token"' : '';
      const metadata = deps.oauth && SERVER_NAME.test(server) ? `, resource_metadata="${deps.oauth.resources.metadataUrlOf(server)}"` : '';
      const scope = deps.oauth ? `, scope="${FULL_SCOPE}"` : '';
      return `Bearer realm="flowgate-tools"${metadata}${scope}${invalid}`;
    },
  };
}
