/**
 * The gateway's error family: a status, a stable machine code and a sentence for a person.
 * `expose` false means the message is for the log only; the client sees a plain 500.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: { expose?: boolean; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }

  get expose(): boolean {
    return this.options.expose ?? (this.status < 500 || this.status === 503);
  }
}

export const badRequest = (code: string, message: string): HttpError => new HttpError(400, code, message);
export const unauthorized = (message = 'a valid credential is required'): HttpError => new HttpError(401, 'unauthorized', message);
export const forbidden = (message: string): HttpError => new HttpError(403, 'forbidden', message);
export const notFound = (code: string, message: string): HttpError => new HttpError(404, code, message);
export const conflict = (code: string, message: string): HttpError => new HttpError(409, code, message);
export const unprocessable = (code: string, message: string): HttpError => new HttpError(422, code, message);
export const temporalUnavailable = (): HttpError =>
  new HttpError(503, 'temporal_unavailable', 'the workflow service is unreachable; retry shortly', { expose: true, headers: { 'Retry-After': '5' } });
