/**
 * When an embedded Temporal process is ready: the server when its frontend serves and the
 * namespace is registered and known to every service; the Web UI server when it answers HTTP.
 */
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type { Guarded } from './guarded-process';

/** gRPC status codes */
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

/** The server exited before it was ready: often something passing (a port taken between the check and the bind). */
export class ExitedDuringStart extends Error {}

/** Until the frontend serves, the namespace exists (registered here when it does not) and can be described. */
export async function untilReady(server: Guarded, address: string, namespace: string, kind: 'dev' | 'postgres', timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (server.hasExited()) throw new ExitedDuringStart(`the embedded Temporal server exited during start (${await server.exited}): ${server.stderrTail()}`);
    try {
      if (await namespaceReady(address, namespace, kind)) return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`the embedded Temporal server did not become ready at ${address} within ${timeoutMs / 1000} s${last ? ` (${last})` : ''}: ${server.stderrTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function grpcCode(err: unknown): number | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'number' ? err.code : undefined;
}

async function namespaceReady(address: string, namespace: string, kind: 'dev' | 'postgres'): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    // A subchannel of its own: the process-wide pool would hand back one that an earlier connection
    // to this address is still backing off on, delaying a restarted server's readiness by minutes.
    connection = await Connection.connect({ address, connectTimeout: 1000, channelArgs: { 'grpc.use_local_subchannel_pool': 1 } });
    const health = await connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' });
    if (health.status !== 1 /* SERVING */) return false;
    try {
      await connection.workflowService.describeNamespace({ namespace });
      return await namespaceCached(connection, namespace);
    } catch (err) {
      if (grpcCode(err) !== NOT_FOUND) throw err;
    }
    // a plain server has no namespace until one is registered; the retention of closed runs' histories (docs/operations.md)
    const retentionHours = kind === 'dev' ? 24 : 72;
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(`${retentionHours}h`) });
    } catch (err) {
      if (grpcCode(err) !== ALREADY_EXISTS) throw err;
    }
    return false; // registered: the services learn of it within their cache's refresh interval
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/**
 * Whether the services know the namespace (describeNamespace reads the database; the other calls
 * go through each service's namespace cache, refreshed every few seconds): a run of an ID nobody
 * uses is "not found" as a workflow, not as a namespace.
 */
async function namespaceCached(connection: Connection, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: `flowgate-readiness-${process.pid}` } });
    return true;
  } catch (err) {
    if (grpcCode(err) !== NOT_FOUND) throw err;
    return !/namespace/i.test(err instanceof Error ? err.message : '');
  }
}

/** Until the Web UI server answers HTTP. */
export async function untilHttp(ui: Guarded, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (ui.hasExited()) throw new Error(`the Temporal Web UI server exited during start (${await ui.exited}): ${ui.stderrTail()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await response.body?.cancel();
      return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await ui.stop();
      throw new Error(`the Temporal Web UI server did not answer at ${url}: ${ui.stderrTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
