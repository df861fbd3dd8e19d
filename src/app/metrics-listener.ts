/**
 * FLOWGATE_METRICS_PORT: /metrics on a listener of its own, without credentials (bind it where
 * only Prometheus reaches). A worker-only process has no gateway: this is where its metrics are.
 */
import http from 'node:http';
import type { FlowgateMetrics } from '../observability/metrics';
import { listeningPort } from '../net/inbound-limits';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

function hostUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function serveMetrics(metrics: FlowgateMetrics, host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    metrics.text().then((text) => {
      res.writeHead(200, { 'Content-Type': metrics.contentType(), 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
    }, () => {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics could not be collected\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    url: hostUrl(host, listeningPort(server)),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
