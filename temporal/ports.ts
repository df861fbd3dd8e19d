/** Free ports on loopback: the embedded Temporal's checks before it binds, and tests' picks. */
import net from 'node:net';

export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Whether the port is free, or becomes free within `waitMs`: a server stopped just before (an orphan
 * reclaimed, or the one of a flowgate killed a moment ago) may still be letting its sockets go.
 */
export async function portFreeSoon(port: number, host: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await portIsFree(port, host)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A port the system picks (in the ephemeral range). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A free port for an embedded Temporal's frontend whose derived ports (temporal/server-config.ts,
 * internalPorts) are free too: picked at random between 10000 and 30000, below the ephemeral range
 * other programs' connections take their ports from.
 */
export async function freeTemporalPort(derived: (port: number) => number[], host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 20_000);
    const ports = derived(port);
    let free = true;
    for (const p of ports) {
      if (!(await portIsFree(p, host))) {
        free = false;
        break;
      }
    }
    if (free) return port;
  }
  throw new Error('no free block of ports for a Temporal server between 10000 and 30000');
}
