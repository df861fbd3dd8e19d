/**
 * Live updates of the console's pages: a run page follows the run's status stream (the same
 * Server-Sent Events as the API's, live-status.ts); the runs page follows the open runs it lists
 * over one stream, `event: status` `{runId, status, reasonCode?}` whenever one's status changes, then
 * `event: done` once all have ended. Both read through the process's RunWatcher.
 */
import type { Context } from 'koa';
import type { RunView } from '../../runs/run-service';
import { ended } from '../../runs/run-watcher';
import type { GatewayDeps } from '../deps';
import { streamStatus } from '../live-status';
import { callTemporal } from '../temporal-errors';

const MAX_LIVE_RUNS = 25;
const HEARTBEAT_MS = 15_000;

export function consoleRunEvents(ctx: Context, deps: GatewayDeps, view: RunView): void {
  streamStatus(ctx, deps.watcher, view);
}

export async function liveRunStatuses(ctx: Context, deps: GatewayDeps, orgId: string): Promise<void> {
  const runs = deps.console?.runs;
  const ids = String(ctx.query.ids ?? '').split(',').filter((id) => /^[A-Za-z0-9_.:-]{1,200}$/.test(id)).slice(0, MAX_LIVE_RUNS);
  const views = runs ? (await callTemporal(() => Promise.all(ids.map((id) => runs.view(orgId, id))))).filter((v): v is RunView => v !== undefined) : [];
  const open = views.filter((v) => !ended(v));
  if (open.length === 0) {
    ctx.status = 204;
    return;
  }
  const stream = ctx.res;
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  stream.writeHead(200, { ...ctx.response.headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  const statuses = new Map<string, string>(open.map((v) => [v.runId, v.status]));
  const unsubscribes: (() => void)[] = [];
  const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = (): void => {
    clearInterval(heartbeat);
    for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    if (!stream.writableEnded) stream.end();
  };
  stream.write('retry: 5000\n\n');
  // the list shows open runs as RUNNING: say at once which of them are PAUSED or PENDING
  for (const v of open) if (v.status !== 'RUNNING') stream.write(`event: status\ndata: ${JSON.stringify({ runId: v.runId, status: v.status })}\n\n`);
  for (const v of open) {
    unsubscribes.push(deps.watcher.subscribe(v.runId, (next) => {
      if (stream.writableEnded || statuses.get(next.runId) === next.status) return;
      statuses.set(next.runId, next.status);
      // a cancelled run ends FAILED with reasonCode CANCELLED: the badge must read it, not relabel it FAILED
      stream.write(`event: status\ndata: ${JSON.stringify({ runId: next.runId, status: next.status, ...(next.reasonCode ? { reasonCode: next.reasonCode } : {}) })}\n\n`);
      if ([...statuses.values()].every((s) => s === 'COMPLETE' || s === 'FAILED' || s === 'TIMEOUT')) {
        stream.write('event: done\ndata: {}\n\n');
        close();
      }
    }));
  }
  ctx.req.once('close', close);
}
