/** An MCP client's side of signing in by URL (docs/tool-gateway.md "Signing in by URL"), for the SDK client in tests. */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Where the client says it listens for the code; nothing listens there (the tests read the redirect). */
export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** An MCP client's OAuth state, in memory; the authorization URL it was sent to is kept for the test to "open". */
export class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl(): string { return REDIRECT_URI; }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'flowgate test client', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation(): OAuthClientInformationMixed | undefined { return this.client; }
  saveClientInformation(info: OAuthClientInformationMixed): void { this.client = info; }
  tokens(): OAuthTokens | undefined { return this.saved; }
  saveTokens(tokens: OAuthTokens): void { this.saved = tokens; }
  redirectToAuthorization(url: URL): void { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string): void { this.verifier = verifier; }
  codeVerifier(): string { return this.verifier; }
}

