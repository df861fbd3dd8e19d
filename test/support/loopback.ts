/**
 * Test servers on loopback: listen on a free port of 127.0.0.1, and close without waiting for
 * keep-alive connections (a fetch client holds them open, and `server.close` alone would wait).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`, no trailing slash */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: http.Server): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
