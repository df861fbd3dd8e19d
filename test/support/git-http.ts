/**
 * Git's smart HTTP protocol on loopback for tests: every request is handed to `git http-backend`
 * (Git's own CGI program) over the repositories under `root`, so a client clones from
 * `http://127.0.0.1:<port>/<repo>` as it would from a Git host; with `tls`, from
 * `https://127.0.0.1:<port>/<repo>`, and with `basicAuth` only when it sends that user and
 * password (a private repository: 401 with a Basic challenge otherwise, as Git hosts answer).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface GitHttp {
  url: string;
  /** the requests refused for want of the right credentials */
  refused: number;
  /** the connections opened, and the requests made on them (a client that does not trust the certificate makes none) */
  connections: number;
  requests: number;
  close(): Promise<void>;
}

export interface GitHttpOptions {
  /** serve https with this key and certificate (PEM) */
  tls?: { key: string; cert: string };
  /** the credentials every request must carry */
  basicAuth?: { username: string; password: string };
}

function authorized(req: IncomingMessage, basicAuth: GitHttpOptions['basicAuth']): boolean {
  if (!basicAuth) return true;
  const expected = `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}`;
  return req.headers.authorization === expected;
}

function serve(root: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const cgi = spawn('git', ['http-backend'], {
    env: {
      ...process.env, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''), REQUEST_METHOD: req.method ?? 'GET', CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      REMOTE_ADDR: '127.0.0.1',
    },
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (started) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  cgi.on('close', () => {
    if (!started) res.writeHead(500);
    res.end();
  });
}

/** Serves the Git repositories under `root` (their folder names are the URL paths). */
export async function startGitHttp(root: string, options: GitHttpOptions = {}): Promise<GitHttp> {
  let refused = 0;
  let connections = 0;
  let requests = 0;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    requests++;
    if (authorized(req, options.basicAuth)) {
      serve(root, req, res);
      return;
    }
    refused++;
    req.resume();
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
    res.end('authentication required\n');
  };
  const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, handle) : createServer(handle);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    get refused() {
      return refused;
    },
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
