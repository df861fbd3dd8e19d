/**
 * The blob store the scale-out replicas share: the S3-compatible test server (versitygw), started
 * for the test file with a bucket of its own. Missing binary: a failure under CI, else a loud skip.
 */
import path from 'node:path';
import { missingPeer } from './ci';
import { findVersitygw, startS3Server } from './versitygw';

export interface BlobStorePeer {
  /** what points every replica at the store */
  env: Record<string, string>;
  /** where a replica would keep blobs on its own disk (must stay absent) */
  localDirs(dataDir: string): string[];
  close(): Promise<void>;
}

export async function sharedBlobStore(ctx: Mocha.Context): Promise<BlobStorePeer> {
  const binary = await findVersitygw();
  if (!binary) missingPeer(ctx, 'the S3-compatible server (versitygw)', 'not built: run `npm run s3:install`');
  const server = await startS3Server(binary, 'flowgate-scale-out');
  return {
    env: server.env('replicas'),
    localDirs: (dataDir) => [path.join(dataDir, 'blobs')],
    close: () => server.stop(),
  };
}
