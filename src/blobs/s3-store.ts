/**
 * The blob store on an S3-compatible object store (AWS S3, MinIO, versitygw, Ceph RGW, R2, ...),
 * through the official AWS SDK v3. Keys are the same organization-prefixed keys as the local
 * store's, under an optional prefix of the bucket (`s3://bucket/prefix`).
 *
 * Uploads stream: a streamed put (an attachment arriving in a multipart request) is first spooled
 * to a file of this process's own (`spoolDir`, never in memory, never shared), counted and limited
 * there by its source, then sent from that file: one PutObject with a known length below
 * MULTIPART_THRESHOLD, a multipart upload (lib-storage Upload) above it. A source that fails (an
 * upload over a limit, a client that went away) therefore never reaches the bucket; a multipart
 * upload that fails is aborted (lib-storage does so, leaving no parts), and the retention sweep
 * aborts incomplete multipart uploads a crash left behind (removeStale).
 */
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand,
  ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException, type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertSafeKey, type BlobEntry, type BlobStat, type BlobStore, type PresignOptions } from './blob-store';

/** Files up to this size go in one PutObject from the spool file; larger ones as a multipart upload. */
export const MULTIPART_THRESHOLD = 16 * 1024 * 1024;
/** Part size and parts in flight of a multipart upload: at most PART_SIZE × (QUEUE_SIZE + 1) buffered per upload. */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;
/** S3's longest presigned URL (SigV4): seven days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface S3BlobStoreOptions {
  bucket: string;
  /** a key prefix inside the bucket, without leading or trailing slash; '' for none */
  prefix: string;
  /** an S3-compatible endpoint (`http://127.0.0.1:7070`); unset: AWS S3 of the region */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** where streamed uploads are spooled before they are sent (a local folder of this process) */
  spoolDir: string;
  /** explicit credentials (tests); unset: the AWS SDK's default chain (AWS_* variables, profile, role) */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

function isMissing(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  return err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404;
}

/** The S3 client for `options`; also used by the test fixture to create its bucket. */
export function createS3Client(options: Pick<S3BlobStoreOptions, 'endpoint' | 'region' | 'forcePathStyle' | 'credentials'>): S3Client {
  const config: S3ClientConfig = {
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    // Checksums only where S3 requires them: many S3-compatible servers do not take the SDK's
    // default trailing CRC32 of every upload (aws-chunked encoding), and the wire is TLS anyway.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    // A copy: the SDK marks the credentials object it is given ($source), and the configuration's is frozen.
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  };
  return new S3Client(config);
}

export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore & { client: S3Client } {
  const client = createS3Client(options);
  const { bucket } = options;
  const base = options.prefix ? `${options.prefix}/` : '';
  const objectKey = (key: string): string => {
    assertSafeKey(key);
    return `${base}${key}`;
  };

  /** Spools `source` to a fresh local file; on failure the file is gone and the source's error stands. */
  const spool = async (source: Readable): Promise<{ file: string; size: number }> => {
    await fs.mkdir(options.spoolDir, { recursive: true });
    const file = path.join(options.spoolDir, `${randomBytes(12).toString('hex')}.spool`);
    const handle = await fs.open(file, 'wx', 0o600);
    try {
      await pipeline(source, handle.createWriteStream());
      const { size } = await fs.stat(file);
      return { file, size };
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(file, { force: true });
      throw err;
    }
  };

  const sendFile = async (key: string, file: string, size: number): Promise<void> => {
    if (size <= MULTIPART_THRESHOLD) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey(key), Body: createReadStream(file), ContentLength: size }));
      return;
    }
    // lib-storage aborts the multipart upload when a part fails (leavePartsOnError: false).
    const upload = new Upload({
      client, partSize: PART_SIZE, queueSize: QUEUE_SIZE, leavePartsOnError: false,
      params: { Bucket: bucket, Key: objectKey(key), Body: createReadStream(file), ContentLength: size },
    });
    await upload.done();
  };

  const open = async (key: string): Promise<{ stream: Readable; size: number; modified: Date } | undefined> => {
    try {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
      const body = got.Body;
      if (!(body instanceof Readable)) throw new Error('the S3 client answered a body that is not a Node stream');
      return { stream: body, size: got.ContentLength ?? 0, modified: got.LastModified ?? new Date(0) };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  };

  return {
    client,
    async put(key, data) {
      const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey(key), Body: body, ContentLength: body.length }));
      return { size: body.length };
    },
    async putStream(key, source) {
      objectKey(key); // an unsafe key is refused before any byte is read
      // The source may fail before the pipeline takes it: that error must reject this put, not go unhandled.
      const ignore = (): void => undefined;
      source.on('error', ignore);
      let spooled: { file: string; size: number };
      try {
        spooled = await spool(source);
      } finally {
        source.off('error', ignore);
      }
      try {
        await sendFile(key, spooled.file, spooled.size);
        return { size: spooled.size };
      } finally {
        await fs.rm(spooled.file, { force: true });
      }
    },
    open,
    async read(key) {
      const opened = await open(key);
      if (!opened) return undefined;
      const chunks: Buffer[] = [];
      // a blob stream has no encoding: its chunks are Buffers (Readable types them `any`)
      for await (const chunk of opened.stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      return Buffer.concat(chunks);
    },
    async stat(key): Promise<BlobStat | undefined> {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
        return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0) };
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
    },
    async *list(prefix): AsyncIterable<BlobEntry> {
      if (prefix !== '') assertSafeKey(prefix.replace(/\/$/, ''));
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${base}${prefix}`, ContinuationToken: token }));
        for (const object of page.Contents ?? []) {
          if (!object.Key?.startsWith(base)) continue;
          yield { key: object.Key.slice(base.length), size: object.Size ?? 0, modified: object.LastModified ?? new Date(0) };
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async removeStale(before) {
      // Spool files of uploads this process was killed in the middle of.
      let removed = 0;
      for (const name of await fs.readdir(options.spoolDir).catch((): string[] => [])) {
        const file = path.join(options.spoolDir, name);
        const stat = await fs.stat(file).catch(() => undefined);
        if (stat?.isFile() && stat.mtime < before) {
          await fs.rm(file, { force: true });
          removed++;
        }
      }
      // Multipart uploads started before `before` and never completed (a process killed mid-upload).
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      for (;;) {
        const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: base || undefined, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
        for (const upload of page.Uploads ?? []) {
          if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated >= before) continue;
          try {
            await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
            removed++;
          } catch (err) {
            if (!isMissing(err)) throw err; // completed or aborted meanwhile
          }
        }
        if (!page.IsTruncated) break;
        keyMarker = page.NextKeyMarker;
        uploadIdMarker = page.NextUploadIdMarker;
      }
      return removed;
    },
    async presign(key, presign: PresignOptions) {
      const expiresIn = Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.floor(presign.expiresInSeconds)));
      const command = new GetObjectCommand({
        Bucket: bucket, Key: objectKey(key),
        ...(presign.contentType ? { ResponseContentType: presign.contentType } : {}),
        ...(presign.contentDisposition ? { ResponseContentDisposition: presign.contentDisposition } : {}),
        ResponseCacheControl: 'private, no-store',
      });
      return getSignedUrl(client, command, { expiresIn });
    },
    close() {
      client.destroy();
    },
  };
}
