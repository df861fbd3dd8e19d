/**
 * A TCP proxy on loopback in front of a real server (the test's Temporal): what a network between
 * flowgate and Temporal can do to it. `delayMs` holds every chunk back that long in each direction
 * (a slow link: a gRPC call then takes at least twice as long), keeping the bytes in order; `cut()`
 * drops every connection at once and refuses new ones, as a Temporal host that went away.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>`, a gRPC address */
  address: string;
  /** each chunk's delay, either way; change it at any time (0: none) */
  delayMs: number;
  /** drops every connection (RST) and closes the listener */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  /** Copies `from` to `to`, each chunk after the proxy's delay, in order. */
  const relay = (from: net.Socket, to: net.Socket): void => {
    let tail = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const delayMs = proxy.delayMs;
      const due = Date.now() + delayMs;
      tail = tail.then(() => new Promise<void>((resolve) => {
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
          resolve();
        }, Math.max(0, due - Date.now()));
      }));
    });
    from.once('end', () => void tail.then(() => to.end()));
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.once('error', drop);
    upstream.once('error', drop);
    client.once('close', drop);
    upstream.once('close', drop);
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const proxy: TcpProxy = {
    address: `127.0.0.1:${port}`,
    delayMs: 0,
    cut() {
      server.close();
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    }),
  };
  return proxy;
}
