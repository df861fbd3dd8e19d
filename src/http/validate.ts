/**
 * Parse once at the edge: a request body (or query, or a field of one) is checked with its zod
 * schema here and read back typed; a mismatch is a 400 naming each problem's path.
 */
import type { z } from 'zod';
import { badRequest } from './http-error';
import { fieldOf, isRecord } from '../common/narrow';

/** `value` (an absent one counts as `{}`) as `schema` reads it, or 400 `code` listing the problems. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, code = 'invalid_body'): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    throw badRequest(code, parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  }
  return parsed.data;
}

/** The request body, as parsed by jsonBody (or another body parser mounted before the route). */
export function bodyOf(ctx: { request: { body?: unknown } }): unknown {
  return ctx.request.body;
}

/** A form's (or JSON object body's) fields as the body parser left them; {} for no body or one that is no object. */
export function formOf(ctx: { request: object }): Record<string, unknown> {
  const body = fieldOf(ctx.request, 'body');
  return isRecord(body) ? body : {};
}

/** The request body as `schema` reads it (parseInput). */
export function parseBody<T>(ctx: { request: { body?: unknown } }, schema: z.ZodType<T>, code = 'invalid_body'): T {
  return parseInput(schema, ctx.request.body, code);
}
