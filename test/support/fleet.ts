/**
 * What the tests of run management and fleet operations share: a run's status and a batch's
 * report as the API answers them (docs/http-api.md), and an upstream that counts its calls per
 * path and fails `/flaky` until it is made healthy (an outage, then its end).
 */
import http from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback';

/** GET /api/v1/runs/{id}, the fields these tests read. */
export interface FleetRunStatus {
  runId: string;
  status: string;
  error?: string;
  stepStatus: Record<string, string>;
  waitingOn?: { kind: string; by?: string; reason?: string; resumeAt?: string };
  operatorPause?: { by: string; at: string; reason?: string };
  stepInfo: Record<string, { reusedFrom?: string }>;
}

/** GET /api/v1/runs/batch/{batchId}. */
export interface BatchBody {
  batchId: string;
  status: string;
  total: number;
  succeeded: number;
  refused: number;
  failed: number;
  outcomes: { runId: string; outcome: string; newRunId?: string; code?: string; message?: string }[];
}

export type CountingUpstream = LoopbackServer & { calls: Record<string, number>; healthy: { value: boolean } };

/** Counts calls per path; `/flaky` answers `failStatus` until `healthy.value` is set. */
export async function countingUpstream(failStatus: number): Promise<CountingUpstream> {
  const calls: Record<string, number> = {};
  const healthy = { value: false };
  const server = http.createServer((req, res) => {
    const name = req.url ?? '/';
    calls[name] = (calls[name] ?? 0) + 1;
    if (name === '/flaky' && !healthy.value) res.statusCode = failStatus;
    res.end(`${name} #${calls[name]}`);
  });
  return { ...(await listenOnLoopback(server)), calls, healthy };
}
