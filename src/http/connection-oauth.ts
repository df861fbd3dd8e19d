/**
 * The OAuth authorization code flow of custom connections (docs/tool-gateway.md): the callback
 * the provider sends the browser back to (routes/servers.ts answers it), and the redirect URI
 * the API's and the console's "connect" register with the provider.
 */
import type { GatewayDeps } from './deps';

/** Where the provider sends the browser back with the code. */
export const OAUTH_CALLBACK_PATH = '/api/v1/oauth/callback';

/** The callback at this gateway's public URL (else the request's own origin). */
export function connectionRedirectUri(deps: Pick<GatewayDeps, 'config'>, ctx: { protocol: string; host: string }): string {
  return `${deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`}${OAUTH_CALLBACK_PATH}`;
}
