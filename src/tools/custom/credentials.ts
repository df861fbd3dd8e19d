/**
 * Custom connections (`application: "custom"`): a customer API's base URL, an endpoint to test
 * it with, and one of the contract's auth kinds (5, rule 4). Stored sealed like every connection.
 */
import { z } from 'zod';

export const CUSTOM_APPLICATION = 'custom';

const HttpUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http: or https: URL' });
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ScopesSchema = z.array(z.string().min(1).max(200)).max(50).default([]);

export const ApiKeyAuthSchema = z.object({
  kind: z.literal('api_key'),
  /** sent as a header (default) or as a query parameter */
  in: z.enum(['header', 'query']).default('header'),
  name: z.string().min(1).max(200).regex(HEADER_NAME, 'must be a header or parameter name'),
  value: z.string().min(1).max(8192),
}).strict();

export const BasicAuthSchema = z.object({
  kind: z.literal('basic'),
  username: z.string().min(1).max(1000),
  password: z.string().max(8192),
}).strict();

/** How the client authenticates at the token endpoint: HTTP Basic (RFC 6749's default) or form fields. */
const ClientAuthSchema = z.enum(['basic', 'body']).default('basic');

export const ClientCredentialsAuthSchema = z.object({
  kind: z.literal('oauth2_client_credentials'),
  tokenUrl: HttpUrlSchema,
  clientId: z.string().min(1).max(1000),
  clientSecret: z.string().min(1).max(8192),
  scopes: ScopesSchema,
  clientAuth: ClientAuthSchema,
}).strict();

export const AuthorizationCodeAuthSchema = z.object({
  kind: z.literal('oauth2_authorization_code'),
  authorizeUrl: HttpUrlSchema,
  tokenUrl: HttpUrlSchema,
  clientId: z.string().min(1).max(1000),
  clientSecret: z.string().min(1).max(8192),
  scopes: ScopesSchema,
  clientAuth: ClientAuthSchema,
  /** PKCE (S256); turn off only for a provider that rejects it */
  pkce: z.boolean().default(true),
}).strict();

export const CustomAuthSchema = z.discriminatedUnion('kind', [ApiKeyAuthSchema, BasicAuthSchema, ClientCredentialsAuthSchema, AuthorizationCodeAuthSchema]);

export const CustomCredentialsSchema = z.object({
  baseUrl: HttpUrlSchema,
  /** a path under baseUrl answered by GET, for `POST /api/v1/connections/{PCID}/test` */
  testPath: z.string().startsWith('/').max(2000).default('/'),
  auth: CustomAuthSchema,
}).strict();

export type CustomCredentials = z.infer<typeof CustomCredentialsSchema>;
export type CustomAuthConfig = z.infer<typeof CustomAuthSchema>;

/** A URL under the connection's base: `/pets` on `https://api.example/v1` is `https://api.example/v1/pets`. */
export function underBase(baseUrl: string, path: string): URL {
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl;
  return new URL(`${base}${path.startsWith('/') ? path : `/${path}`}`);
}
