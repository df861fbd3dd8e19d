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

/** Registers `batch` and `batch-status` under `runs`. */
export function batchCommands(runs: Command): void {
  runs.command('batch').description('act on every run a filter selects, as one tracked batch (POST /api/v1/runs/batch)')
    .requiredOption('--action <action>', 'cancel, rerun, resume, pause or unpause')
    .option('--workflow <id>').option('--trigger <id>').option('--status <status>', 'PENDING, RUNNING, PAUSED, COMPLETE, FAILED or TIMEOUT')
    .option('--started-after <instant>', 'ISO 8601').option('--started-before <instant>', 'ISO 8601')
    .option('--error-contains <text>', 'the run\'s error contains this text')
    .option('--limit <n>', 'at most N runs, newest first (default 100, at most 1000)')
    .option('--reason <text>', 'pause: why')
    .option('--dry-run', 'only count the runs it would act on')
    .option('--yes', 'confirm a batch of more than 20 runs')
    .option('--wait', 'follow the batch until it is COMPLETE and print its outcome')
    .action(async (o: {
      action: string; workflow?: string; trigger?: string; status?: string; startedAfter?: string; startedBefore?: string; errorContains?: string;
      limit?: string; reason?: string; dryRun?: boolean; yes?: boolean; wait?: boolean;
    }, cmd: Command) => {
      const c = contextOf(cmd);
      const filter = {
        ...(o.workflow ? { workflowId: o.workflow } : {}), ...(o.trigger ? { triggerId: o.trigger } : {}), ...(o.status ? { status: o.status } : {}),
        ...(o.startedAfter ? { startedAfter: o.startedAfter } : {}), ...(o.startedBefore ? { startedBefore: o.startedBefore } : {}),
        ...(o.errorContains ? { errorContains: o.errorContains } : {}),
      };
      const limit = o.limit === undefined ? undefined : Number(o.limit);
      if (limit !== undefined && !Number.isInteger(limit)) throw new CliError(`--limit must be a whole number, not ${o.limit}`, EXIT.USAGE);
      const body = (await c.client.request<Row>('POST', '/api/v1/runs/batch', {
        body: { action: o.action, filter, ...(limit === undefined ? {} : { limit }), ...(o.reason ? { reason: o.reason } : {}), ...(o.dryRun ? { dryRun: true } : {}), ...(o.yes ? { confirm: true } : {}) },
      })).body;
      if (o.dryRun || typeof body.batchId !== 'string') {
        if (c.json) printJson(body);
        else process.stdout.write(`${String(body.count)} run(s) would be acted on (${o.action})\n`);
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
