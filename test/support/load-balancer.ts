/**
 * A round-robin HTTP load balancer on loopback, as operators put in front of gateway replicas: the
 * address every replica hands out (FLOWGATE_PUBLIC_URL). A backend that refuses the connection (a
 * killed gateway) is skipped for a request without a body; the backends can change while it runs.
 */
import http from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback';

export interface LoadBalancer extends LoopbackServer {
  /** replaces the backends (`http://127.0.0.1:<port>` each) */
  setBackends(urls: readonly string[]): void;
  /** requests forwarded, by backend */
  forwarded: Record<string, number>;
}

export interface LoadBalancerOptions {
  /** holds requests whose path starts with `pathPrefix` back for `ms` (a slow link to some files) */
  delay?: { pathPrefix: string; ms: number };
}

export async function startLoadBalancer(initial: readonly string[], options: LoadBalancerOptions = {}): Promise<LoadBalancer> {
  let backends = [...initial];
  let next = 0;
  const forwarded: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    // a body can be sent once only: only requests without one move on to another backend
    const retryable = req.method === 'GET' || req.method === 'HEAD';
    const tries = retryable ? backends.length : 1;
    const attempt = (left: number): void => {
      const backend = backends[next++ % backends.length];
      if (backend === undefined || left === 0) {
        res.writeHead(502, { 'Content-Type': 'text/plain' }).end('no backend answered\n');
        return;
      }
      const target = new URL(req.url ?? '/', backend);
      const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
        forwarded[backend] = (forwarded[backend] ?? 0) + 1;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (res.headersSent) {
          res.destroy(err);
        } else if (err.code === 'ECONNREFUSED' && retryable) {
          attempt(left - 1);
        } else {
          res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`backend ${backend}: ${err.message}\n`);
        }
      });
      if (retryable) upstream.end();
      else req.pipe(upstream);
    };
    const { delay } = options;
    if (delay && (req.url ?? '').startsWith(delay.pathPrefix)) setTimeout(() => attempt(tries), delay.ms);
    else attempt(tries);
  });
  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    forwarded,
    setBackends(urls) {
      backends = [...urls];
    },
  };
}
