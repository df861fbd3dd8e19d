/** Runs (list, status, results, watch, history, open, rerun, resume, cancel, pause, unpause, batch) and `call` (trigger a run). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { contextOf, type CliContext } from './context';
import { CliError, EXIT } from './errors';
import { collect, isRecord, parsePairs, readDocument, readText } from './inputs';
import { note, printJson, printTable, Progress, show, showObject } from './output';
import { batchCommands } from './run-batch';
import { describeApprovalWait, elapsed, exitCodeFor, follow, readHistory, type StatusBody } from './run-stream';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;
/** `call --wait`'s synchronous window: a run done within it is answered in one request; else it is followed. */
const SYNC_WINDOW_S = 1;

async function download(c: CliContext, results: Row, dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const saved: string[] = [];
  const entries = Array.isArray(results.results) ? results.results.filter(isRecord) : [];
  for (const entry of entries) {
    const urls = isRecord(entry.resultUrls) ? entry.resultUrls : {};
    for (const [name, link] of Object.entries(urls)) {
      const url = isRecord(link) && typeof link.url === 'string' ? link.url : undefined;
      if (!url) continue;
      const response = await fetch(new URL(url, c.client.url('/')), { signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new CliError(`download of ${name} of step ${String(entry.stepIndex)}: HTTP ${response.status}`);
      // Only the base name: a file name from the server never chooses a directory.
      const file = path.join(dir, `step-${String(entry.stepIndex)}`, path.basename(name));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      saved.push(file);
    }
  }
  // The designated output (the trigger's, else the workflow's `output`) under its own file name.
  const designated = isRecord(results.designatedOutput) ? results.designatedOutput : undefined;
  if (designated && typeof designated.url === 'string') {
    const name = path.basename(typeof designated.fileName === 'string' && designated.fileName ? designated.fileName : 'output.txt');
    const file = path.join(dir, name);
    writeFileSync(file, await fetchText(c, designated.url, `the designated output ${name}`));
    saved.push(file);
  }
  return saved;
}

/** A signed file link of the API (absolute or relative to the base URL), read as text. */
async function fetchText(c: CliContext, url: string, what: string): Promise<string> {
  const response = await fetch(new URL(url, c.client.url('/')), { signal: AbortSignal.timeout(120_000) });
  if (!response.ok) throw new CliError(`download of ${what}: HTTP ${response.status}`);
  return response.text();
}

/**
 * What a finished run answers with, from its results body (2.6): the designated output, else the
 * last step's result (the last top-level step, else the last outcome); undefined when it has none.
 */
export async function runResultText(c: CliContext, results: Row): Promise<string | undefined> {
  const designated = isRecord(results.designatedOutput) ? results.designatedOutput : undefined;
  if (designated && typeof designated.url === 'string') return fetchText(c, designated.url, 'the designated output');
  const entries = Array.isArray(results.results) ? results.results.filter(isRecord) : [];
  const last = entries.filter((e) => e.stepPath === undefined).at(-1) ?? entries.at(-1);
  const urls = last && isRecord(last.resultUrls) ? last.resultUrls : {};
  const output = isRecord(urls['output.txt']) ? urls['output.txt'] : undefined;
  if (!output || typeof output.url !== 'string') return undefined;
  return fetchText(c, output.url, `the result of step ${String(last?.stepIndex)}`);
}

/** Prints a run's result text on stdout as it is (a newline added only for a terminal). */
function printResult(text: string): void {
  process.stdout.write(text);
  if (process.stdout.isTTY && !text.endsWith('\n')) process.stdout.write('\n');
}

/** The `rel="temporal-ui"` target of a Link header, if it names one. */
export function temporalUiLink(header: string | null): string | undefined {
  for (const part of (header ?? '').split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && /;\s*rel="?temporal-ui"?/i.test(match[2] ?? '')) return match[1];
  }
  return undefined;
}

/**
 * The run's Temporal Web UI page for `runs open`. Configured (--temporal-ui, FLOWGATE_TEMPORAL_UI_URL,
 * the config file's `temporalUiUrl`) wins; else the gateway's `Link: <…>; rel="temporal-ui"` on the
 * run's status (sent when it started the embedded dev server with its UI). Else it refuses, naming what to set.
 */
async function temporalUiPage(c: CliContext, runId: string, o: { temporalUi?: string; namespace?: string }): Promise<{ runId: string; url: string }> {
  // The run must be the organization's: a typo is a 404 here, not a dead link.
  const reply = await c.client.request<StatusBody>('GET', `/api/v1/runs/${enc(runId)}`);
  const configured = o.temporalUi ?? c.temporalUiUrl;
  const namespace = o.namespace ?? c.temporalNamespace;
  const fromGateway = temporalUiLink(reply.headers.get('link'));
  let url: string;
  // The run's Temporal workflow ID is its run ID.
  if (configured) url = `${configured.replace(/\/+$/, '')}/namespaces/${enc(namespace ?? 'default')}/workflows/${enc(reply.body.runId)}`;
  else if (fromGateway) url = namespace ? fromGateway.replace(/\/namespaces\/[^/]+\//, `/namespaces/${enc(namespace)}/`) : fromGateway;
  else {
    throw new CliError(`${c.client.baseUrl} does not say where its Temporal Web UI is (it did not start the embedded dev server's UI): `
      + 'pass --temporal-ui URL, set FLOWGATE_TEMPORAL_UI_URL, or save it with `flowgate login --temporal-ui URL`', EXIT.USAGE);
  }
  return { runId: reply.body.runId, url };
}

export function runCommands(program: Command): void {
  const runs = program.command('runs').description('runs of workflows');
  runs.command('list').option('--workflow <id>').option('--status <status>', 'RUNNING, COMPLETE, FAILED or TIMEOUT').option('--limit <n>', 'at most N', '50')
    .action(async (o: { workflow?: string; status?: string; limit: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const query = new URLSearchParams({ limit: o.limit, ...(o.workflow ? { workflowId: o.workflow } : {}), ...(o.status ? { status: o.status } : {}) });
      const body = await c.client.get<{ runs: Row[] }>(`/api/v1/runs?${query}`);
      show(c.json, body, body.runs, ['runId', 'automationId', 'status', 'started', 'closed']);
    });
  runs.command('status <runId>').action(async (runId: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<StatusBody>(`/api/v1/runs/${enc(runId)}`);
    if (c.json) printJson(body);
    else {
      const slot = body.waitingOn?.kind === 'slot' ? body.waitingOn : undefined;
      const operator = body.waitingOn?.kind === 'operator' ? body.waitingOn : undefined;
      const waiting = slot ? `a slot of its ${String(slot.scope)}'s concurrency limit (${String(slot.limit)})${typeof slot.position === 'number' ? `, place ${slot.position} in the queue` : ''}`
        : operator ? `unpause (paused by ${String(operator.by)} at ${String(operator.at)}${typeof operator.reason === 'string' ? `: ${operator.reason}` : ''})` : undefined;
      showObject(false, { runId: body.runId, workflow: body.automationId, status: body.status, ...(body.error ? { error: body.error } : {}), ...(waiting ? { waiting } : {}) });
      for (const [index, step] of Object.entries(body.stepInfo ?? {})) process.stdout.write(`  step ${index} ${step.name}: ${step.status}\n`);
    }
  });
  runs.command('results <runId>').option('--download <dir>', 'save every result file under DIR/step-N/, and the designated output as DIR/<its file name>')
    .action(async (runId: string, o: { download?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const body = await c.client.get<Row>(`/api/v1/runs/${enc(runId)}/results`);
      const saved = o.download ? await download(c, body, o.download) : [];
      if (c.json) printJson(o.download ? { ...body, downloaded: saved } : body);
      else {
        const entries = Array.isArray(body.results) ? body.results.filter(isRecord) : [];
        show(false, body, entries.map((e) => ({ ...e, files: Object.keys(isRecord(e.resultUrls) ? e.resultUrls : {}).join(',') })), ['stepIndex', 'exitCode', 'duration', 'files']);
        for (const file of saved) process.stdout.write(`saved ${file}\n`);
      }
    });
  runs.command('watch <runId>').description('follow a run until it ends, one line per step transition')
    .option('--timeout <seconds>', 'give up (exit 2) after N seconds', (v) => Number(v), 3600)
    .action(async (runId: string, o: { timeout: number }, cmd: Command) => {
      const c = contextOf(cmd);
      const base = `/api/v1/runs/${enc(runId)}`;
      const final = await follow(c, { stream: `${base}/stream`, status: base, auth: 'admin', runId }, o.timeout);
      if (c.json) printJson(final);
      process.exitCode = exitCodeFor(final.status);
    });
  runs.command('history <runId>').description('each step\'s transitions so far, with their times (and how long the step had been in the state before)')
    .action(async (runId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const history = await readHistory(c, runId);
      if (c.json) {
        printJson({ runId, transitions: history.transitions, ...(history.gaps.length ? { gaps: history.gaps } : {}), ...(history.end ? { status: history.end.status } : {}) });
        return;
      }
      for (const gap of history.gaps) note(false, `(transitions ${gap.from} to ${gap.to} are no longer kept)`);
      const before = new Map<string, string | null>();
      const rows = history.transitions.map((t) => {
        const step = t.stepPath ?? String(t.stepIndex);
        const row = { seq: t.seq, at: t.at, step, name: t.name, status: t.status, after: elapsed(before.get(step), t.at) };
        before.set(step, t.at);
        return row;
      });
      printTable(rows, ['seq', 'at', 'step', 'name', 'status', 'after']);
      if (history.end) process.stdout.write(`run ${runId}: ${history.end.status}${history.end.error ? ` (${history.end.error})` : ''}\n`);
    });
  runs.command('open <runId>').description('print the run\'s Temporal Web UI link')
    .option('--temporal-ui <url>', 'the Temporal Web UI base URL (FLOWGATE_TEMPORAL_UI_URL)')
    .option('--namespace <ns>', 'the Temporal namespace (FLOWGATE_TEMPORAL_NAMESPACE; default "default")')
    .action(async (runId: string, o: { temporalUi?: string; namespace?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const page = await temporalUiPage(c, runId, o);
      if (c.json) printJson(page);
      else process.stdout.write(`${page.url}\n`);
    });
  runs.command('rerun <runId>').description('a new run with the same inputs, on the latest version (or --same-version)')
    .option('--same-version', 'run the version the earlier run ran')
    .action(async (runId: string, o: { sameVersion?: boolean }, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/rerun`, { body: { version: o.sameVersion ? 'same' : 'latest' } })).body;
      if (c.json) printJson(body);
      else process.stdout.write(`${String(body.runId)}\n`);
    });
  runs.command('resume <runId>').description('a new run of a FAILED or TIMEOUT run from its failed step, reusing the earlier results')
    .action(async (runId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/resume`)).body;
      if (c.json) printJson(body);
      else process.stdout.write(`${String(body.runId)}\n`);
    });
  runs.command('pause <runId>').description('hold the run at its next step boundary (PAUSED, waitingOn operator) until unpaused')
    .option('--reason <text>', 'why, shown in the run\'s waitingOn')
    .action(async (runId: string, o: { reason?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/pause`, { body: o.reason ? { reason: o.reason } : {} })).body;
      if (c.json) printJson(body);
      else process.stdout.write(body.applied === false ? `pause of ${runId} recorded: the run takes it when it next runs\n` : `${runId} paused (it holds at its next step boundary)\n`);
    });
  runs.command('unpause <runId>').description('lift an operator\'s pause: the run starts its next step')
    .action(async (runId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/unpause`)).body;
      if (c.json) printJson(body);
      else process.stdout.write(body.applied === false ? `unpause of ${runId} recorded: the run takes it when it next runs\n` : `${runId} unpaused\n`);
    });
  batchCommands(runs);
  runs.command('cancel <runId>').description('Temporal cancellation: the run ends FAILED, error "the run was cancelled"')
    .action(async (runId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/cancel`)).body;
      if (c.json) printJson(body);
      else process.stdout.write(`cancellation of ${runId} requested\n`);
    });
}

function callInputs(o: { input: string[]; file?: string }): Row {
  let base: Row = {};
  if (o.file) {
    const doc = readDocument(o.file);
    if (!isRecord(doc)) throw new CliError(`${o.file} must hold an object of inputs`, EXIT.USAGE);
    base = doc;
  } else if (o.input.length === 0 && !process.stdin.isTTY) {
    const text = readText('-').trim();
    if (text) {
      const doc: unknown = JSON.parse(text);
      if (!isRecord(doc)) throw new CliError('stdin must hold a JSON object of inputs', EXIT.USAGE);
      base = doc;
    }
  }
  return { ...base, ...parsePairs(o.input) };
}

export function callCommand(program: Command): void {
  program.command('call <triggerId>').description('trigger a run (asynchronous unless --wait)')
    .option('-i, --input <key=value>', 'an input (repeatable)', collect, [])
    .option('-f, --file <file>', 'inputs from a JSON or YAML file (- for stdin; stdin is read when piped)')
    .option('--wait [seconds]', 'wait for the result (default: until it ends)')
    .option('--idempotency-key <key>')
    .option('--callback-url <url>', 'POST the run\'s final status there when it ends')
    .action(async (triggerId: string, o: { input: string[]; file?: string; wait?: boolean | string; idempotencyKey?: string; callbackUrl?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      if (!c.apiKey) throw new CliError('no API key: pass --api-key or set FLOWGATE_API_KEY', EXIT.USAGE);
      const inputs = callInputs(o);
      const waitTotal = o.wait === undefined ? undefined : o.wait === true ? 3600 : Number(o.wait);
      if (waitTotal !== undefined && !(waitTotal > 0)) throw new CliError('--wait takes a positive number of seconds', EXIT.USAGE);
      // A short synchronous window answers a quick run in one request; a longer one is followed on its status
      // stream, its run ID printed at once, so a run that waits (an approval) is never a silent terminal.
      const window = waitTotal === undefined ? undefined : Math.min(SYNC_WINDOW_S, Math.ceil(waitTotal));
      const progress = new Progress();
      if (window) progress.update('waiting for the run…');
      const reply = await c.client.request<Row | string>('POST', `/ext/triggers/${enc(triggerId)}`, {
        auth: 'none', body: inputs, timeoutMs: ((window ?? 0) + 30) * 1000,
        headers: {
          'X-API-KEY': c.apiKey, ...(window ? { Prefer: `wait=${window}` } : {}), ...(o.idempotencyKey ? { 'Idempotency-Key': o.idempotencyKey } : {}),
          ...(o.callbackUrl ? { 'X-Pf-Callback-Url': o.callbackUrl } : {}),
        },
      });
      progress.done();
      const runId = reply.headers.get('x-pf-run-id') ?? '';
      const automationId = reply.headers.get('x-pf-automation-id') ?? '';
      if (waitTotal === undefined) {
        if (c.json) printJson({ runId, automationId });
        else process.stdout.write(`${runId}\n`);
        return;
      }
      const runPath = `/ext/webhook/${enc(c.apiKey)}/runs/${enc(automationId)}/${enc(runId)}`;
      let final: Row;
      let resultsBody: Row | undefined;
      if (reply.status === 200 && isRecord(reply.body)) final = reply.body;
      else {
        process.stderr.write(`run ${runId} started\n`);
        const target = { stream: `${runPath}/status/stream`, status: `${runPath}/status`, auth: 'none' as const, runId };
        const ended = await follow(c, target, Math.max(1, waitTotal - (window ?? 0)), false, (s) => s.waitingOn?.kind === 'approval');
        if (ended.status === 'PAUSED') {
          // Waiting for people, not for time: say for what, and leave (exit 3) instead of holding the terminal.
          if (c.json) printJson(ended);
          else process.stderr.write(`${describeApprovalWait(ended)}\n`);
          process.exitCode = EXIT.WAITING;
          return;
        }
        final = resultsBody = (await c.client.request<Row>('GET', `${runPath}/results`, { auth: 'none' })).body;
      }
      const status = typeof final.status === 'string' ? final.status : 'FAILED';
      process.exitCode = exitCodeFor(status);
      if (c.json) {
        printJson(final);
        return;
      }
      if (status !== 'COMPLETE') {
        showObject(false, { runId, workflow: automationId, status, ...(final.error ? { error: final.error } : {}) });
        return;
      }
      // The run's result: the designated output (only the results body names it), else the last step's.
      const results = resultsBody ?? (await c.client.request<Row>('GET', `${runPath}/results`, { auth: 'none' })).body;
      const text = await runResultText(c, results);
      process.stderr.write(`run ${runId}: ${status}\n`);
      if (text !== undefined) printResult(text);
    });
}
