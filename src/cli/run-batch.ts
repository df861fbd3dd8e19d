/** `flowgate runs batch` and `runs batch-status`: bulk actions on runs by filter (POST /api/v1/runs/batch, docs/http-api.md). */
import type { Command } from 'commander';
import { contextOf, type CliContext } from './context';
import { CliError, EXIT } from './errors';
import { isRecord } from './inputs';
import { printJson, printTable, show } from './output';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

/** Polls a batch until it is COMPLETE (or FAILED), at most an hour. */
async function followBatch(c: CliContext, batchId: string): Promise<Row> {
  const deadline = Date.now() + 3_600_000;
  for (;;) {
    const body = await c.client.get<Row>(`/api/v1/runs/batch/${enc(batchId)}`);
    if (body.status === 'COMPLETE' || body.status === 'FAILED') return body;
    if (Date.now() > deadline) throw new CliError(`batch ${batchId} is still ${String(body.status)} after an hour`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** `customer.id=c-42` → ['customer.id', 'c-42']; the value is JSON when it parses (`n=3`, `ok=true`, `x=null`), else the text. */
function inputField(text: string): [string, unknown] {
  const at = text.indexOf('=');
  if (at <= 0) throw new CliError(`--input takes path=value, not ${text}`, EXIT.USAGE);
  const raw = text.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // plain text
  }
  return [text.slice(0, at), value];
}

/** Registers `batch` and `batch-status` under `runs`. */
export function batchCommands(runs: Command): void {
  runs.command('batch').description('act on every run a filter selects, as one tracked batch (POST /api/v1/runs/batch)')
    .requiredOption('--action <action>', 'cancel, rerun, resume, pause or unpause')
    .option('--workflow <id>').option('--trigger <id>').option('--status <status>', 'PENDING, RUNNING, PAUSED, COMPLETE, FAILED or TIMEOUT')
    .option('--started-after <instant>', 'ISO 8601').option('--started-before <instant>', 'ISO 8601')
    .option('--error-contains <text>', 'the run\'s error contains this text')
    .option('--input <path=value>', 'an input field by dotted path holds this value (JSON, else text); repeatable', (v: string, all: string[] = []) => [...all, v])
    .option('--limit <n>', 'at most N runs, newest first (default 100, at most 1000)')
    .option('--reason <text>', 'pause: why')
    .option('--dry-run', 'only count the runs it would act on')
    .option('--yes', 'confirm a batch of more than 20 runs')
    .option('--wait', 'follow the batch until it is COMPLETE and print its outcome')
    .action(async (o: {
      action: string; workflow?: string; trigger?: string; status?: string; startedAfter?: string; startedBefore?: string; errorContains?: string;
      limit?: string; reason?: string; dryRun?: boolean; yes?: boolean; wait?: boolean; input?: string[];
    }, cmd: Command) => {
      const c = contextOf(cmd);
      const input = o.input ? Object.fromEntries(o.input.map(inputField)) : undefined;
      const filter = {
        ...(o.workflow ? { workflowId: o.workflow } : {}), ...(o.trigger ? { triggerId: o.trigger } : {}), ...(o.status ? { status: o.status } : {}),
        ...(o.startedAfter ? { startedAfter: o.startedAfter } : {}), ...(o.startedBefore ? { startedBefore: o.startedBefore } : {}),
        ...(o.errorContains ? { errorContains: o.errorContains } : {}), ...(input ? { input } : {}),
      };
      const limit = o.limit === undefined ? undefined : Number(o.limit);
      if (limit !== undefined && !Number.isInteger(limit)) throw new CliError(`--limit must be a whole number, not ${o.limit}`, EXIT.USAGE);
      const body = (await c.client.request<Row>('POST', '/api/v1/runs/batch', {
        body: { action: o.action, filter, ...(limit === undefined ? {} : { limit }), ...(o.reason ? { reason: o.reason } : {}), ...(o.dryRun ? { dryRun: true } : {}), ...(o.yes ? { confirm: true } : {}) },
      })).body;
      if (o.dryRun || typeof body.batchId !== 'string') {
        if (c.json) printJson(body);
        else process.stdout.write(`${String(body.count)} run(s) would be acted on (${o.action})${body.capped === true ? `; the scan stopped after ${String(body.scanned)} candidates: older runs may match too` : ''}\n`);
        return;
      }
      if (!o.wait) {
        if (c.json) printJson(body);
        else process.stdout.write(`${body.batchId}\n`);
        return;
      }
      const report = await followBatch(c, body.batchId);
      if (c.json) printJson(report);
      else {
        process.stdout.write(`batch ${body.batchId}: ${String(report.status)}, ${String(report.total)} run(s): ${String(report.succeeded)} succeeded, ${String(report.refused)} refused, ${String(report.failed)} failed\n`);
        const outcomes = Array.isArray(report.outcomes) ? report.outcomes.filter(isRecord) : [];
        printTable(outcomes.filter((r) => r.outcome !== 'succeeded'), ['runId', 'outcome', 'code', 'message']);
      }
      if (report.failed !== 0 || report.status !== 'COMPLETE') process.exitCode = EXIT.FAILURE;
    });
  runs.command('batch-status <batchId>').description('a batch\'s progress and each run\'s outcome')
    .action(async (batchId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = await c.client.get<Row>(`/api/v1/runs/batch/${enc(batchId)}`);
      const outcomes = Array.isArray(body.outcomes) ? body.outcomes.filter(isRecord) : [];
      show(c.json, body, outcomes, ['runId', 'outcome', 'newRunId', 'code', 'message']);
    });
}

/** Registers `pause` and `unpause` under `workflows` or `triggers`: a hold on the new runs of a whole workflow or trigger. */
export function holdCommands(group: Command, scope: 'workflow' | 'trigger'): void {
  const base = scope === 'workflow' ? '/api/v1/workflows' : '/api/v1/triggers';
  group.command('pause <id>').description(`new runs of the ${scope} wait PENDING before their first step until it is unpaused (started runs go on)`)
    .option('--reason <text>', 'why (shown in the held runs\' waitingOn)')
    .action(async (id: string, o: { reason?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `${base}/${enc(id)}/pause`, { body: o.reason ? { reason: o.reason } : {} })).body;
      if (c.json) printJson(body);
      else process.stdout.write(`${scope} ${id} paused: its new runs wait PENDING\n`);
    });
  group.command('unpause <id>').description(`new runs of the ${scope} start at once again, and the runs it held are released`)
    .action(async (id: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `${base}/${enc(id)}/unpause`)).body;
      if (c.json) printJson(body);
      else process.stdout.write(`${scope} ${id} unpaused: the runs it held are being released (${String(body.releaseId)})\n`);
    });
}
