/**
 * A real S3-compatible server for the tests: versitygw (github.com/versity/versitygw) with its
 * POSIX backend, built once with `go install` of a pinned version into the cache outside the clone
 * (`npm run s3:install`, which CI runs), started per test file on loopback with a temporary folder,
 * and its bucket created through the AWS SDK. Never a mock of S3.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config/config';
import { createS3Client } from '../../src/blobs/s3-store';
import { isExecutable } from '../../temporal/cli';
import { freePort } from '../../temporal/ports';
import { missingPeer } from './ci';

const run = promisify(execFile);

/** Pinned: the version `go install` builds (checked to exist on the Go module proxy). */
export const VERSITYGW_VERSION = 'v1.8.0';
const GO_PACKAGE = 'github.com/versity/versitygw/cmd/versitygw';

export function versitygwPath(cacheDir: string = loadConfig({ ...process.env, TEMPORAL_ADDRESS: undefined }).temporal.cacheDir): string {
  return path.join(cacheDir, `versitygw-${VERSITYGW_VERSION}`, 'versitygw');
}


/** The cached binary, or undefined when `npm run s3:install` has not built it. */
export async function findVersitygw(): Promise<string | undefined> {
  const file = versitygwPath();
  return (await isExecutable(file)) ? file : undefined;
}

/** Builds the pinned versitygw into the cache (a scratch folder renamed into place), unless it is there. */
export async function ensureVersitygw(progress: (message: string) => void = () => undefined): Promise<string> {
  const target = versitygwPath();
  if (await isExecutable(target)) return target;
  const dir = path.dirname(target);
  await fs.mkdir(path.dirname(dir), { recursive: true });
  progress(`building versitygw ${VERSITYGW_VERSION} with go install (several minutes, once) into ${dir}`);
  const scratch = await fs.mkdtemp(`${dir}.build-`);
  try {
    await run('go', ['install', `${GO_PACKAGE}@${VERSITYGW_VERSION}`], {
      env: { ...process.env, GOBIN: scratch, CGO_ENABLED: '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
    await fs.mkdir(dir, { recursive: true });
    await fs.rename(path.join(scratch, 'versitygw'), target);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  return target;
}

export interface S3Server {
  endpoint: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** the variables that point flowgate at this server (credentials through the AWS SDK's own variables) */
  env(prefix?: string): Record<string, string>;
  stop(): Promise<void>;
}

/** Starts versitygw on a free loopback port over a fresh folder and creates `bucket` in it. */
export async function startS3Server(binary: string, bucket = 'flowgate-test'): Promise<S3Server> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'flowgate-s3-'));
  const credentials = { accessKeyId: `test${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(18).toString('hex') };
  const region = 'us-east-1';
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['--port', `127.0.0.1:${port}`, '--region', region, 'posix', root], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ROOT_ACCESS_KEY: credentials.accessKeyId, ROOT_SECRET_KEY: credentials.secretAccessKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await fs.rm(root, { recursive: true, force: true });
  };
  const client = createS3Client({ endpoint, region, forcePathStyle: true, credentials });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`versitygw exited at start: ${output}`);
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`versitygw did not answer within 30 s: ${(err as Error).message}; ${output}`, { cause: err });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    client.destroy();
  }
  return {
    endpoint, bucket, region, credentials,
    env: (prefix = '') => ({
      FLOWGATE_BLOB_STORE: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
      FLOWGATE_S3_ENDPOINT: endpoint,
      FLOWGATE_S3_REGION: region,
      FLOWGATE_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    }),
    stop,
  };
}

/**
 * Starts the S3 server for the enclosing describe (before/after hooks) and returns a getter for it.
 * A missing binary fails under CI (missingPeer).
 */
export function s3ServerForSuite(bucket?: string): () => S3Server {
  let server: S3Server | undefined;
  before(async function () {
    const binary = await findVersitygw();
    if (!binary) missingPeer(this, 'versitygw (the S3-compatible test server)', 'not built: run `npm run s3:install`');
    server = await startS3Server(binary, bucket);
  });
  after(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('the S3 server is not started');
    return server;
  };
}
