/**
 * A trigger call's inputs (interface.md 2.1, 2.2): query parameters, then the body on top (the
 * body wins a name both carry). Bodies: JSON objects, `application/x-www-form-urlencoded` pairs,
 * and, on the API trigger only, `multipart/form-data` with files that become `attachments`.
 * Every refusal is an HttpError and leaves nothing stored.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { BlobStore } from '../blobs/blob-store';
import { discardRequest, receiveMultipart } from '../attachments/receive-multipart';
import { AttachmentRefusal } from '../attachments/refusal';
import { BodyTooLargeError, IncompleteBodyError, readBoundedBody } from './read-body';
import { ATTACHMENT_LINK_TTL_SECONDS, type TriggerLimits } from '../attachments/limits';
import { INPUTS_REF_FIELD } from '../common/inputs-reference';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import { badRequest, HttpError } from './http-error';
import { jsonDepthExceeds, tooDeepMessage } from '../common/json-depth';
import { isRecord } from '../common/narrow';

export const ATTACHMENTS_FIELD = 'attachments';

/** Element of `attachments` (interface.md 2.2). */
export interface Attachment {
  filename: string;
  contentType: string;
  size: number;
  url: string;
}

export interface TriggerInputs {
  /** '' when the call carried neither query parameters nor a body */
  inputs: Record<string, unknown> | '';
  /** some values arrived as text (query, form, multipart fields): the schema may convert them */
  textual: boolean;
  /** blobs written for this call; the caller removes them if the call fails later */
  storedKeys: string[];
}

export interface ReadOptions {
  multipart: boolean;
  blobs: BlobStore;
  signer: SignedUrlSigner;
  orgId: string;
  limits: TriggerLimits;
}

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const MULTIPART_TYPE = 'multipart/form-data';
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Name → value, or → array of values when the name repeats. Built without assignment, so `__proto__` is an ordinary name. */
export function pairsToInputs(pairs: Iterable<[string, string]>): Record<string, unknown> {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    if (name === '') continue;
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  return Object.fromEntries([...byName].map(([name, values]) => [name, values.length === 1 ? values[0] : values]));
}

function tooLarge(limit: number, what: string): HttpError {
  return new HttpError(413, 'payload_too_large', `the ${what} body is larger than the limit of ${limit / 1024 / 1024} MiB (${limit} bytes)`);
}

/** The whole body, at most `limit` bytes, with the trigger surface's 413 and 400. */
async function readBody(req: IncomingMessage, limit: number, what: string): Promise<Buffer> {
  try {
    return await readBoundedBody(req, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw tooLarge(limit, what);
    if (err instanceof IncompleteBodyError) throw new HttpError(400, 'incomplete_body', err.message);
    throw err;
  }
}

function decodeUtf8(raw: Buffer, code: string, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(raw);
  } catch {
    throw badRequest(code, `the ${what} body is not valid UTF-8`);
  }
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('invalid_json', 'the body is not valid JSON');
  }
  if (!isRecord(value)) {
    throw badRequest('invalid_body', 'the body must be a JSON object of inputs, not an array or a single value');
  }
  if (jsonDepthExceeds(value)) throw badRequest('too_deep', tooDeepMessage());
  return value;
}

function unsupported(ctx: Context, accepted: string): HttpError {
  const sent = ctx.get('Content-Type');
  return new HttpError(415, 'unsupported_media_type', `this endpoint takes ${accepted}, not ${sent ? JSON.stringify(sent.slice(0, 100)) : 'an untyped body'}`);
}

/**
 * The inputs of a body already read whole (a verified trigger's call: its signature was checked
 * over these bytes first): JSON objects and form pairs, as readTriggerInputs reads them; no
 * multipart. Query parameters merge under the body's values.
 */
export function inputsFromRawBody(ctx: Context, raw: Buffer): Omit<TriggerInputs, 'storedKeys'> {
  const query = pairsToInputs(new URLSearchParams(ctx.querystring));
  const fromQuery = Object.keys(query).length > 0;
  const type = ctx.request.type.trim().toLowerCase();
  let body: Record<string, unknown> | undefined;
  let textual = fromQuery;
  if (raw.length === 0) body = undefined;
  else if (JSON_TYPE.test(type)) body = parseJsonObject(decodeUtf8(raw, 'invalid_json', 'JSON').replace(/^\uFEFF/, ''));
  else if (type === FORM_TYPE) {
    body = pairsToInputs(new URLSearchParams(decodeUtf8(raw, 'invalid_body', 'form')));
    textual = true;
  } else throw unsupported(ctx, 'application/json or application/x-www-form-urlencoded');
  if (body === undefined && !fromQuery) return { inputs: '', textual: false };
  const inputs = { ...query, ...body };
  if (Object.prototype.hasOwnProperty.call(inputs, INPUTS_REF_FIELD)) throw badRequest('invalid_body', `the input name ${INPUTS_REF_FIELD} is reserved`);
  return { inputs, textual };
}

/** Reads the call's inputs; query parameters first, the body's values on top. */
export async function readTriggerInputs(ctx: Context, options: ReadOptions): Promise<TriggerInputs> {
  const query = pairsToInputs(new URLSearchParams(ctx.querystring));
  const fromQuery = Object.keys(query).length > 0;
  const body = ctx.method === 'GET' ? undefined : await readBodyInputs(ctx, options);
  const storedKeys = body?.storedKeys ?? [];
  if (body?.inputs === undefined && !fromQuery) return { inputs: '', textual: false, storedKeys };
  const inputs = { ...query, ...body?.inputs };
  if (Object.prototype.hasOwnProperty.call(inputs, INPUTS_REF_FIELD)) {
    await Promise.allSettled(storedKeys.map((key) => options.blobs.remove(key)));
    throw badRequest('invalid_body', `the input name ${INPUTS_REF_FIELD} is reserved`);
  }
  return { inputs, textual: fromQuery || (body?.textual ?? false), storedKeys };
}

async function readBodyInputs(ctx: Context, options: ReadOptions): Promise<{ inputs?: Record<string, unknown>; textual: boolean; storedKeys: string[] }> {
  const req = ctx.req;
  if (!hasBody(req)) return { textual: false, storedKeys: [] };
  const accepted = options.multipart
    ? 'application/json, application/x-www-form-urlencoded or multipart/form-data'
    : 'application/json or application/x-www-form-urlencoded (no multipart or files on the webhook trigger)';
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    discardRequest(req);
    throw new HttpError(415, 'unsupported_media_type', `content encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted; send the body uncompressed`);
  }
  const type = ctx.request.type.trim().toLowerCase();
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(ctx.get('Content-Type'))?.[1]?.toLowerCase();
  if (charset !== undefined && !UTF8_CHARSETS.has(charset) && type !== MULTIPART_TYPE) {
    discardRequest(req);
    throw new HttpError(415, 'unsupported_media_type', `charset ${JSON.stringify(charset.slice(0, 40))} is not accepted; send UTF-8`);
  }

  if (JSON_TYPE.test(type)) {
    const text = decodeUtf8(await readBody(req, options.limits.bodyBytes, 'JSON'), 'invalid_json', 'JSON');
    return { inputs: parseJsonObject(text.replace(/^\uFEFF/, '')), textual: false, storedKeys: [] };
  }
  if (type === FORM_TYPE) {
    const text = decodeUtf8(await readBody(req, options.limits.bodyBytes, 'form'), 'invalid_body', 'form');
    const inputs = pairsToInputs(new URLSearchParams(text));
    return { inputs: Object.keys(inputs).length > 0 || text.length > 0 ? inputs : undefined, textual: true, storedKeys: [] };
  }
  if (type === MULTIPART_TYPE && options.multipart) {
    const received = await receiveMultipart(req, { blobs: options.blobs, orgId: options.orgId, limits: options.limits, reservedFieldName: ATTACHMENTS_FIELD })
      .catch((err: unknown) => {
        throw err instanceof AttachmentRefusal ? new HttpError(err.status, err.code, err.message) : err;
      });
    const attachments: Attachment[] = received.files.map((f) => ({
      filename: f.filename,
      contentType: f.contentType,
      size: f.size,
      url: options.signer.sign(f.key, ATTACHMENT_LINK_TTL_SECONDS, { name: f.filename, type: f.contentType }),
    }));
    return {
      inputs: { ...pairsToInputs(received.fields), [ATTACHMENTS_FIELD]: attachments },
      textual: true,
      storedKeys: received.files.map((f) => f.key),
    };
  }
  discardRequest(req);
  throw unsupported(ctx, accepted);
}
