/**
 * The blob store the configuration names: the data dir's (default) or an S3-compatible bucket
 * (FLOWGATE_BLOB_STORE=s3://bucket/prefix).
 */
import { createFileBlobStore, type BlobStore } from './blob-store';
import type { Config } from '../config/config';
import { createS3BlobStore } from './s3-store';

export function openBlobStore(config: Pick<Config, 'blobStore'>): BlobStore {
  const c = config.blobStore;
  if (c.kind === 'local') return createFileBlobStore(c.root);
  return createS3BlobStore({
    bucket: c.bucket, prefix: c.prefix, endpoint: c.endpoint, region: c.region, forcePathStyle: c.forcePathStyle,
    spoolDir: c.spoolDir, credentials: c.credentials,
  });
}

/** Whether `/files/...` answers a redirect to the object store instead of streaming the blob. */
export function redirectsDownloads(config: Pick<Config, 'blobStore'>): boolean {
  return config.blobStore.kind === 's3' && config.blobStore.downloads === 'redirect';
}
