/**
 * The tool gateway as an OAuth protected resource (RFC 9728; docs/tool-gateway.md "Signing in by
 * URL"): its resource identifiers and metadata URLs. Each server is a resource of its own
 * (`<public URL>/tools/<server>`), and the gateway as a whole (`<public URL>/tools`) is one too:
 * a token for the whole gateway is good at every server, one for a server only there.
 */
import type { Config } from '../config/config';
import { OAUTH_SCOPES } from '../oauth/scopes';

export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** The name a server may have in a resource URL. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class OAuthResources {
  /** the tool gateway's path prefix ('' when it is served at the root) */
  readonly toolsPrefix: string;

  constructor(readonly publicUrl: string, config: Pick<Config, 'toolsBasePath'>) {
    this.toolsPrefix = config.toolsBasePath === '/' ? '' : config.toolsBasePath.replace(/\/+$/, '');
  }

  /** The authorization server's issuer identifier: this gateway's public URL. */
  get issuer(): string {
    return this.publicUrl;
  }

  get gateway(): string {
    return `${this.publicUrl}${this.toolsPrefix}`;
  }

  server(name: string): string {
    return `${this.gateway}/${name}`;
  }

  /** The resources a token must name to be good at `server`. */
  acceptedAt(server: string): string[] {
    return [this.server(server), this.gateway];
  }

  metadataUrlOf(server: string): string {
    return `${this.publicUrl}${PROTECTED_RESOURCE_METADATA_PATH}${this.toolsPrefix}/${server}`;
  }

  /** Whether `resource` names the gateway or one of its servers (which servers exist depends on the organization, not known yet). */
  isResource(resource: string): boolean {
    if (resource === this.gateway) return true;
    const prefix = `${this.gateway}/`;
    return resource.startsWith(prefix) && SERVER_NAME.test(resource.slice(prefix.length));
  }

  /** RFC 9728 metadata of `resource`. */
  metadata(resource: string): Record<string, unknown> {
    return {
      resource,
      authorization_servers: [this.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: [...OAUTH_SCOPES],
      resource_name: resource === this.gateway ? 'flowgate tool gateway' : `flowgate tool server ${resource.slice(this.gateway.length + 1)}`,
    };
  }

  /** RFC 8414 metadata of the authorization server. */
  authorizationServerMetadata(): Record<string, unknown> {
    const base = this.issuer;
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [...OAUTH_SCOPES],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    };
  }
}
