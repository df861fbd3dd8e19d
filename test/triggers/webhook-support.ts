/**
 * Helpers of the verified and shaped trigger tests (test/triggers/): signing with openssl as
 * docs/webhooks.md shows it, sending a signed body, and reading a trigger's runs from Temporal.
 */
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { startedInput } from '../../src/runs/run-history';
import type { RunInput } from '../../src/common/run-types';
import type { TestFlowgate } from '../support/flowgate';

/** `openssl dgst -<algorithm> -hmac <secret>` over `data`: the hex (or base64) signature, as the docs' recipe makes it. */
export function opensslHmac(secret: string, data: Buffer | string, options: { algorithm?: string; base64?: boolean } = {}): string {
  const algorithm = options.algorithm ?? 'sha256';
  const script = options.base64
    ? `openssl dgst -${algorithm} -hmac "$SECRET" -binary | openssl base64 -A`
    : `openssl dgst -${algorithm} -hmac "$SECRET" -hex | sed 's/^.*= //'`;
  return execFileSync('sh', ['-c', script], { input: data, env: { PATH: process.env.PATH, SECRET: secret } }).toString('utf8').trim();
}

export async function post(fg: TestFlowgate, triggerId: string, body: string, headers: Record<string, string>, contentType = 'application/json'): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'Content-Type': contentType, ...headers }, body });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (typeof parsed === 'object' && parsed !== null) json = Object.fromEntries(Object.entries(parsed));
  } catch {
    json = { text };
  }
  return { status: response.status, headers: response.headers, json };
}

/** The run IDs Temporal lists for the trigger (visibility). */
export async function runsOf(client: Client, triggerId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query: `FlowgateTriggerId = "${triggerId}"` })) ids.push(execution.workflowId);
  return ids.sort();
}

export async function inputsOf(client: Client, runId: string): Promise<RunInput['inputs']> {
  return (await startedInput(client, runId)).inputs;
}

/** Creates a verified (or shaped) trigger of a published workflow; its id. */
export async function createTrigger(fg: TestFlowgate, workflowId: string, fields: Record<string, unknown>): Promise<string> {
  const created = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId, ...fields });
  if (created.status !== 201) throw new Error(`trigger: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id;
}
