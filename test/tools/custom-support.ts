/**
 * Helpers for the custom-server tests: create custom connections and servers through the
 * management API of one organization (an admin token), as a customer would.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestFlowgate } from '../support/flowgate';

export const PETSTORE = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'petstore3.json'), 'utf8')) as Record<string, unknown>;
export const ORG_CHART_YAML = readFileSync(path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'circular-tree.yaml'), 'utf8');

export async function asAdmin<T = Record<string, unknown>>(fg: TestFlowgate, adminToken: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${fg.url}${pathname}`, {
    method,
    redirect: 'manual',
    headers: { Authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
}

export async function createCustomConnection(fg: TestFlowgate, adminToken: string, credentials: Record<string, unknown>): Promise<string> {
  const created = await asAdmin<{ PCID: string }>(fg, adminToken, 'POST', '/api/v1/connections', { application: 'custom', name: 'customer api', credentials });
  if (created.status !== 201) throw new Error(`create connection: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.PCID;
}

export interface ServerBody {
  id: string;
  path: string;
  kind: string;
  name: string;
  tools?: { name: string; description: string; inputSchema: Record<string, unknown> }[];
}

export async function createServer(fg: TestFlowgate, adminToken: string, body: Record<string, unknown>): Promise<ServerBody> {
  const created = await asAdmin<ServerBody>(fg, adminToken, 'POST', '/api/v1/servers', body);
  if (created.status !== 201) throw new Error(`create server: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}
