/**
 * Receives a `multipart/form-data` trigger body while it streams in: each file goes straight to the
 * blob store (through a temporary file), counted and inspected as its bytes arrive, and the first
 * limit crossed stops the whole request. Nothing is ever held whole in memory. A refused request
 * leaves nothing stored: files already written are removed and partial ones never land.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import type { BlobStore } from '../blobs/blob-store';
import { messageOf, toError } from '../common/narrow';
import { cleanContentType, keySegment, refusedByContent, refusedByName, sanitizeFilename, SNIFF_BYTES } from './file-policy';
import type { TriggerLimits } from './limits';
import { AttachmentRefusal } from './refusal';

export interface ReceivedFile {
  filename: string;
  contentType: string;
  size: number;
  key: string;
}

export interface ReceivedMultipart {
  /** non-file fields in arrival order (a name may repeat) */
  fields: [string, string][];
  /** files in arrival order */
  files: ReceivedFile[];
}

export interface ReceiveOptions {
  blobs: BlobStore;
  orgId: string;
  limits: TriggerLimits;
  /** a field name that is not accepted as an ordinary field (the attachments array's own name) */
  reservedFieldName: string;
}

const bytes = (n: number): string => `${n / (1024 * 1024)} MiB (${n} bytes)`;

export const refusals = {
  fileTooLarge: (filename: string, limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'file_too_large', `attachment "${filename}" is larger than the limit of ${bytes(limits.fileBytes)} per file`),
  totalTooLarge: (limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'attachments_too_large', `the attachments together are larger than the limit of ${bytes(limits.totalFileBytes)} per request`),
  tooManyFiles: (limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'too_many_files', `more than ${limits.files} attachments: at most ${limits.files} files per request`),
  fileType: (filename: string, reason: string) =>
    new AttachmentRefusal(415, 'file_type_refused', `attachment "${filename}" is refused: ${reason}; executables and scripts are not accepted`),
  fieldsTooLarge: (limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'fields_too_large', `the form fields together are larger than the limit of ${bytes(limits.fieldBytes)}`),
  tooManyFields: (limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'too_many_fields', `more than ${limits.fields} form fields`),
  fieldNameTooLong: (limits: TriggerLimits) =>
    new AttachmentRefusal(413, 'field_name_too_long', `a form field name is longer than ${limits.fieldNameBytes} bytes`),
};

/** Counts a file's bytes against the limits and refuses executable content before any byte passes. */
class FileInspector extends Transform {
  size = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  private sniffed = false;

  constructor(private readonly check: {
    filename: string;
    limits: TriggerLimits;
    totals: { bytes: number };
    /** called before the first byte; an error refuses the file */
    onFirstByte: () => AttachmentRefusal | undefined;
  }) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (chunk.length === 0) return callback();
    if (this.size === 0) {
      const refusal = this.check.onFirstByte();
      if (refusal) return callback(refusal);
    }
    this.size += chunk.length;
    this.check.totals.bytes += chunk.length;
    if (this.size > this.check.limits.fileBytes) return callback(refusals.fileTooLarge(this.check.filename, this.check.limits));
    if (this.check.totals.bytes > this.check.limits.totalFileBytes) return callback(refusals.totalTooLarge(this.check.limits));
    if (this.sniffed) return callback(null, chunk);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) return callback();
    this.release(callback);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.sniffed && this.headLength > 0) return this.release(callback);
    callback();
  }

  private release(callback: TransformCallback): void {
    this.sniffed = true;
    const head = Buffer.concat(this.head);
    this.head = [];
    const refusal = refusedByContent(head);
    if (refusal) return callback(refusals.fileType(this.check.filename, refusal));
    callback(null, head);
  }
}

/** Lets the rest of a refused request flow into nothing, so the client reads the answer cleanly. */
export function discardRequest(req: IncomingMessage): void {
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
}

export function receiveMultipart(req: IncomingMessage, options: ReceiveOptions): Promise<ReceivedMultipart> {
  const { blobs, limits } = options;
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { fieldNameSize: limits.fieldNameBytes, fieldSize: limits.fieldBytes, fields: limits.fields, headerPairs: 100 },
      });
    } catch (err) {
      discardRequest(req);
      reject(new AttachmentRefusal(400, 'invalid_multipart', `the multipart body cannot be read: ${messageOf(err)}`));
      return;
    }

    const fields: [string, string][] = [];
    const slots: (ReceivedFile | undefined)[] = [];
    const inFlight = new Set<Promise<void>>();
    const active = new Set<FileInspector>();
    const totals = { bytes: 0 };
    let fileCount = 0;
    let fieldBytes = 0;
    let failure: unknown;
    let finishing: Promise<void> | undefined;

    const stored = (): ReceivedFile[] => slots.filter((f): f is ReceivedFile => f !== undefined);
    const finish = (): Promise<void> => finishing ??= (async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      if (failure === undefined) {
        resolve({ fields, files: stored() });
        return;
      }
      await Promise.allSettled(stored().map((f) => blobs.remove(f.key)));
      reject(failure);
    })();
    const fail = (err: unknown): void => {
      if (failure !== undefined) return;
      failure = err;
      req.unpipe(parser);
      discardRequest(req);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      for (const inspector of active) inspector.destroy(toError(err));
      void finish();
    };
    const claimSlot = (): AttachmentRefusal | undefined => (++fileCount > limits.files ? refusals.tooManyFiles(limits) : undefined);

    /** A throw inside a parser event would escape every promise and take the process down: refuse the request instead. */
    const guarded = <A extends unknown[]>(handler: (...args: A) => void) => (...args: A): void => {
      try {
        handler(...args);
      } catch (err) {
        fail(err);
      }
    };

    parser.on('file', guarded((_field: string, stream: Readable, info: busboy.FileInfo) => {
      if (failure !== undefined) {
        stream.resume();
        return;
      }
      const named = Boolean(info.filename);
      const filename = sanitizeFilename(info.filename);
      const contentType = cleanContentType(info.mimeType);
      const refusal = (named ? claimSlot() : undefined) ?? (() => {
        const reason = refusedByName(filename, contentType);
        return reason ? refusals.fileType(filename, reason) : undefined;
      })();
      if (refusal) {
        stream.resume();
        fail(refusal);
        return;
      }
      // An unnamed part is a file input left empty by a browser unless it has content.
      const inspector = new FileInspector({ filename, limits, totals, onFirstByte: () => (named ? undefined : claimSlot()) });
      active.add(inspector);
      // Its errors reach us through putStream's rejection; this keeps one that comes before the put has started from being unhandled.
      inspector.on('error', () => undefined);
      stream.on('error', (err) => inspector.destroy(err));
      stream.pipe(inspector);
      const slot = slots.push(undefined) - 1;
      const key = `attachments/${options.orgId}/${randomUUID()}/${keySegment(filename)}`;
      const put = blobs.putStream(key, inspector).then(async ({ size }) => {
        active.delete(inspector);
        if (!named && size === 0) return blobs.remove(key);
        slots[slot] = { filename, contentType, size, key };
      }, (err: unknown) => {
        active.delete(inspector);
        stream.resume();
        fail(err);
      });
      inFlight.add(put);
      void put.finally(() => inFlight.delete(put));
    }));

    // busboy reports a part without a name as `undefined`, and a value in a charset it cannot decode as `undefined`.
    parser.on('field', guarded((name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
      if (failure !== undefined) return;
      if (value === undefined) return fail(new AttachmentRefusal(400, 'invalid_multipart', `form field "${name ?? ''}" is in a charset that cannot be read; send UTF-8`));
      if (name === undefined) return;
      if (info.nameTruncated) return fail(refusals.fieldNameTooLong(limits));
      fieldBytes += Buffer.byteLength(name) + Buffer.byteLength(value);
      if (info.valueTruncated || fieldBytes > limits.fieldBytes) return fail(refusals.fieldsTooLarge(limits));
      if (name === options.reservedFieldName) {
        return fail(new AttachmentRefusal(400, 'invalid_body', `"${name}" is reserved for the files of a multipart request; send it as a file part or rename the field`));
      }
      if (name !== '') fields.push([name, value]);
    }));
    parser.on('fieldsLimit', () => fail(refusals.tooManyFields(limits)));
    parser.on('error', (err: Error) => fail(new AttachmentRefusal(400, 'invalid_multipart', `the multipart body cannot be read: ${err.message}`)));
    parser.on('close', () => void finish());
    req.on('aborted', () => fail(new AttachmentRefusal(400, 'incomplete_body', 'the request body ended early')));
    req.on('error', () => fail(new AttachmentRefusal(400, 'incomplete_body', 'the request body ended early')));
    req.pipe(parser);
  });
}
