/**
 * A gateway in a process of its own, for tests that send the management API what could crash it:
 * a crash then shows as a dropped socket and an exited child, not as a dead test runner. Calls
 * report a dropped connection as `status: 0` instead of throwing, so a test can say what it sent.
 */
import { randomUUID } from 'node:crypto';
import { temporalAddress } from '../setup/root-hooks';
import { replicaSecrets, startReplica, type Replica } from './replicas';

export interface ManagementProcess {
  replica: Replica;
  url: string;
  adminToken: string;
  /** status 0: the connection dropped without an answer */
  call(method: string, pathname: string, body?: unknown): Promise<{ status: number; text: string; json: Record<string, unknown> | undefined }>;
  /** whether the child has exited, and how */
  exited(): string | undefined;
}

export async function startManagementProcess(): Promise<ManagementProcess> {
  const secrets = replicaSecrets();
  const replica = await startReplica('gateway', {
    TEMPORAL_ADDRESS: temporalAddress(),
    FLOWGATE_TASK_QUEUE: `documents-${randomUUID()}`,
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    ...secrets,
  });
  const url = replica.url!;
  return {
    replica,
    url,
    adminToken: secrets.FLOWGATE_ADMIN_TOKEN,
    async call(method, pathname, body) {
      try {
        const response = await fetch(`${url}${pathname}`, {
          method,
          headers: { Authorization: `Bearer ${secrets.FLOWGATE_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        });
        const text = await response.text();
        let json: Record<string, unknown> | undefined;
        try {
          json = text ? JSON.parse(text) as Record<string, unknown> : undefined;
        } catch {
          json = undefined;
        }
        return { status: response.status, text, json };
      } catch (error) {
        return { status: 0, text: `no answer: ${error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}` : String(error)}`, json: undefined };
      }
    },
    exited() {
      const { exitCode, signalCode } = replica.child.process;
      if (exitCode === null && signalCode === null) return undefined;
      return `the gateway process exited (${signalCode ?? `code ${exitCode}`}): ${replica.child.output().slice(-2000)}`;
    },
  };
}
