/**
 * The gateway's error family: a status, a stable machine code and a sentence for a person.
 * `expose` false means the message is for the log only; the client sees a plain 500.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** `facts`: secret-free facts for the request's audit record (middleware/audit.ts), never answered */
    readonly options: { expose?: boolean; headers?: Record<string, string>; facts?: Readonly<Record<string, unknown>> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }

  get expose(): boolean {
    // 501 (not available on this gateway) and 503 (Temporal unreachable) are answers, not failures
    return this.options.expose ?? (this.status < 500 || this.status === 501 || this.status === 503);
  }
}

/** How a service's refusal codes map onto HTTP: one table per route family. */
export type RefusalStatus<C extends string> = Readonly<Record<C, { status: number; code: string }>>;

/** The HttpError for a service's refusal `{code, message}`, by its route family's table. */
export function refusalError<C extends string>(table: RefusalStatus<C>, refusal: { code: C; message: string; facts?: Readonly<Record<string, unknown>> }): HttpError {
  const { status, code } = table[refusal.code];
  return new HttpError(status, code, refusal.message, refusal.facts ? { facts: refusal.facts } : {});
}

export const badRequest = (code: string, message: string): HttpError => new HttpError(400, code, message);
export const unauthorized = (message = 'a valid credential is required'): HttpError => new HttpError(401, 'unauthorized', message);
export const forbidden = (message: string): HttpError => new HttpError(403, 'forbidden', message);
export const notFound = (code: string, message: string): HttpError => new HttpError(404, code, message);
export const conflict = (code: string, message: string): HttpError => new HttpError(409, code, message);
export const unprocessable = (code: string, message: string): HttpError => new HttpError(422, code, message);
export const temporalUnavailable = (): HttpError =>
  new HttpError(503, 'temporal_unavailable', 'the workflow service is unreachable; retry shortly', { expose: true, headers: { 'Retry-After': '5' } });
/** Temporal answered RESOURCE_EXHAUSTED (its rate limit, a busy shard): nothing was done; retry after a pause. */
export const temporalBusy = (): HttpError =>
  new HttpError(503, 'temporal_busy', 'the workflow service is at its limit and refused the call; nothing was done; retry shortly', { expose: true, headers: { 'Retry-After': '1' } });
