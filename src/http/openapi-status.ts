/**
 * The OpenAPI pieces of a run's live status, the same on the polling surface (routes/runs.ts) and
 * the management API (routes/management.ts): the long poll's headers and answers, the event stream.
 */
import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { StatusBodySchema } from '../contracts/http-bodies';
import { MAX_LONG_POLL_SECONDS } from './live-status';
import { errors, json } from './openapi-kit';

/** The live status of a run (long poll and conditional GET): the same on the polling and admin paths. */
export const statusHeaders = z.object({
  Prefer: z.string().optional().meta({ description: `\`wait=N\`: a long poll, answering as soon as the body differs from the caller's (or after N seconds, at most ${MAX_LONG_POLL_SECONDS})` }),
  'If-None-Match': z.string().optional().meta({ description: 'the ETag the caller has: 304 while it is current' }),
});

export function statusResponses(...errorStatuses: number[]): ZodOpenApiResponsesObject {
  return {
    '200': {
      ...json(StatusBodySchema, 'the run\'s status'),
      headers: z.object({ ETag: z.string(), 'Preference-Applied': z.string().optional().meta({ description: '`wait=N` as applied' }) }),
    },
    '304': { description: 'unchanged: the If-None-Match ETag is current (after the long poll\'s wait, if any)', headers: z.object({ ETag: z.string() }) },
    ...errors(...errorStatuses),
  };
}

const STREAM_DESCRIPTION = 'Server-Sent Events: `retry: 2000`, then `event: step` (id = the transition\'s sequence number; data `{seq, stepIndex, name, status, at}`) '
  + 'per step status change, `event: gap` (no id; data `{from, to}`: transitions no longer kept), and once the run has ended `event: end` '
  + '(id = last transition + 1; data: the RunStatusBody), after which the stream closes. A comment line every 15 s keeps it open.';

/** A run's status stream (the polling and the admin path), without its operationId. */
export function streamOperation(tags: string[], path: z.ZodObject, security?: { [name: string]: string[] }[]): Omit<ZodOpenApiOperationObject, 'operationId'> {
  return {
    tags, summary: 'A run\'s step transitions as Server-Sent Events until it ends, resumable with Last-Event-ID', ...(security ? { security } : {}),
    requestParams: {
      path,
      header: z.object({ 'Last-Event-ID': z.string().regex(/^\d{1,9}$/).optional().meta({ description: 'resume after this event: nothing missed, nothing repeated' }) }),
      query: z.object({
        lastEventId: z.string().regex(/^\d{1,9}$/).optional().meta({ description: 'as Last-Event-ID, for clients that cannot set headers' }),
        follow: z.enum(['true', 'false']).optional().meta({ description: '`false`: the transitions so far (and `end` if the run has ended), then the stream closes' }),
      }),
    },
    responses: {
      '200': { description: STREAM_DESCRIPTION, content: { 'text/event-stream': { schema: z.string() } } },
      '204': { description: 'the run had ended and the caller already has its end event (an EventSource stops reconnecting)' },
      ...errors(400, 401, 404, 429, 503),
    },
  };
}
