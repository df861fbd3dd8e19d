/**
 * A round-robin HTTP load balancer on loopback, as operators put in front of gateway replicas: the
 * address every replica hands out (FLOWGATE_PUBLIC_URL). A request without a body that a backend
 * refuses or drops before answering (a killed gateway) goes to the next one; the backends can
 * change while it runs.
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
    const { delay } = options;
    if (delay && (req.url ?? '').startsWith(delay.pathPrefix)) setTimeout(() => forward(req, res), delay.ms);
    else forward(req, res);
  });
  const forward = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    // a body can be sent once only: only requests without one move on to another backend
    const retryable = req.method === 'GET' || req.method === 'HEAD';
    // this request's own order: the next backend in turn, then the others once each
    const order = backends.map((_, i) => backends[(next + i) % backends.length]!);
    next += 1;
    const tries = retryable ? order.length : Math.min(1, order.length);
    const attempt = (left: number): void => {
      const backend = order[tries - left];
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
      upstream.on('error', (err: Error) => {
        if (res.headersSent) {
          res.destroy(err);
        } else if (retryable) {
          // refused, or dropped before it answered (a killed gateway): like nginx's proxy_next_upstream
          attempt(left - 1);
        } else {
          res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`backend ${backend}: ${err.message}\n`);
        }
      });
      if (retryable) upstream.end();
      else req.pipe(upstream);
    };
    attempt(tries);
  };
  const listening = await listenOnLoopback(server);
  return {
    ...listening,
    forwarded,
    setBackends(urls) {
      backends = [...urls];
    },
  };
}
