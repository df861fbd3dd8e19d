/**
 * Who calls the tool gateway (src/http/routes/tools.ts): a runtime token minted from an API key
 * (POST /auth/token), or an OAuth access token of the gateway's authorization server, good only
 * at the resource it was issued for (docs/tool-gateway.md "Signing in by URL"). A refusal's
 * challenge points an MCP client at the protected-resource metadata (RFC 9728).
 */
import type { Context } from 'koa';
import type { RuntimePrincipal } from '../crypto/runtime-tokens';
import { OAuthServer } from '../oauth/authorization-server';
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

    /** RFC 6750's challenge, with RFC 9728's pointer to where an MCP client learns how to sign in. */
    challenge(ctx: Context, server: string): string {
      const invalid = ctx.get('Authorization') ? ', error="invalid_token"' : '';
      const metadata = deps.oauth && SERVER_NAME.test(server) ? `, resource_metadata="${deps.oauth.resources.metadataUrlOf(server)}"` : '';
      return `Bearer realm="flowgate-tools"${metadata}${invalid}`;
    },
  };
}
