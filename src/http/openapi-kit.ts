/**
 * The pieces OpenAPI entries are written with (openapi.ts and the route modules' operations): a
 * JSON response, the error responses by status, the admin security, a path parameter.
 */
import { z } from 'zod';
import type { ZodOpenApiResponsesObject } from 'zod-openapi';
import { ErrorBodySchema } from '../contracts/http-bodies';

const ERRORS: Record<number, string> = {
  400: 'bad request: invalid body, query or header',
  401: 'missing or unknown credential',
  403: 'the credential may not do this',
  404: 'no such thing (or not this credential\'s)',
  405: 'method not allowed (see Allow)',
  409: 'conflict with the current state',
  413: 'body too large',
  415: 'unsupported content type',
  422: 'inputs do not match the workflow\'s inputSchema',
  429: 'rate limited (see Retry-After)',
  501: 'not available on this gateway (`not_available`)',
  503: 'Temporal unreachable (see Retry-After)',
};

export const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

/** A JSON request body. */
export const jsonRequest = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

export function errors(...statuses: number[]): ZodOpenApiResponsesObject {
  return Object.fromEntries(statuses.map((status) => [String(status), json(ErrorBodySchema, ERRORS[status] ?? 'error')]));
}

export const noContent = { description: 'done; no body' };

/** The management API's security: an admin token or a member's personal access token. */
export const admin: { [name: string]: string[] }[] = [{ adminBearer: [] }];

/** A path of one parameter. */
export const id = (name: string, description: string) => z.object({ [name]: z.string().meta({ description }) });
