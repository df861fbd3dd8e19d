/** Runs (list, status, results, watch, cancel), approvals, and `call` (trigger a run). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { contextOf, type CliContext } from './context';
import { CliError, EXIT } from './errors';
import { collect, isRecord, parsePairs, readDocument, readText } from './inputs';
import { note, printJson, Progress, show, showObject } from './output';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

interface StatusBody { runId: string; automationId: string; status: string; error?: string; stepInfo?: Record<string, { status: string; name: string }> }

export function exitCodeFor(status: string): number {
  if (status === 'COMPLETE') return EXIT.OK;
  if (status === 'TIMEOUT') return EXIT.TIMEOUT;
  return EXIT.FAILURE;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One Server-Sent Event as the status stream sends it. */
export interface StreamEvent { id?: string; event: string; data: string }

/** Splits a text/event-stream body into events (comments and `retry:` lines are dropped). */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
      if (line === '') {
        if (current.data.length > 0 || current.event) yield { ...(current.id === undefined ? {} : { id: current.id }), event: current.event ?? 'message', data: current.data.join('\n') };
        current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') current.id = value;
      else if (field === 'event') current.event = value;
      else if (field === 'data') current.data.push(value);
    }
  }
}

/** Reconnects after a stream was cut: at most this many in a row without an event in between. */
const MAX_RECONNECTS = 8;

/**
 * Follows a run through its status stream (`…/status/stream` or `/api/v1/runs/{id}/stream`),
 * printing one line per step transition, until its `end` event; answers that event's status body.
 * A cut stream is reopened with `Last-Event-ID`, so nothing is missed or repeated. Throws a
 * TIMEOUT CliError past `timeoutSeconds`.
 */
export async function follow(c: CliContext, target: { stream: string; status: string; auth: 'admin' | 'none'; runId: string }, timeoutSeconds: number, echo = true): Promise<StatusBody> {
  const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
  const progress = new Progress();
  const stillGoing = () => new CliError(`run ${target.runId} has not ended after ${timeoutSeconds} s`, EXIT.TIMEOUT);
  let lastEventId: string | undefined;
  let failures = 0;
  let lastError: string | undefined;
  progress.update(`waiting for run ${target.runId}…`);
  for (;;) {
    if (deadline.aborted) {
      progress.done();
      throw stillGoing();
    }
    try {
      const response = await c.client.open(target.stream, { auth: target.auth, signal: deadline, headers: lastEventId ? { 'Last-Event-ID': lastEventId } : {} });
      // 204: the run had ended and its end event was already read on an earlier connection
      if (response.status === 204 || !response.body) {
        progress.done();
        return (await c.client.request<StatusBody>('GET', target.status, { auth: target.auth })).body;
      }
      for await (const event of readEvents(response.body)) {
        failures = 0;
        if (event.id !== undefined) lastEventId = event.id;
        progress.done();
        if (event.event === 'step') {
          const step = JSON.parse(event.data) as { stepIndex: number; name: string; status: string };
          if (echo) note(c.json, `step ${step.stepIndex} ${step.name}: ${step.status}`);
        } else if (event.event === 'gap') {
          const gap = JSON.parse(event.data) as { from: number; to: number };
          if (echo) note(c.json, `(transitions ${gap.from} to ${gap.to} are no longer kept)`);
        } else if (event.event === 'end') {
          const body = JSON.parse(event.data) as StatusBody;
          if (echo) note(c.json, `run ${body.runId}: ${body.status}${body.error ? ` (${body.error})` : ''}`);
          return body;
        }
        progress.update(`waiting for run ${target.runId}…`);
      }
    } catch (err) {
      if (deadline.aborted) {
        progress.done();
        throw stillGoing();
      }
      if (err instanceof CliError) throw err;
      lastError = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
    // The stream ended without an `end` event (a proxy or the gateway cut it): reopen it after the last event.
    if (++failures > MAX_RECONNECTS) {
      progress.done();
      throw new CliError(`the status stream of run ${target.runId} keeps failing${lastError ? `: ${lastError}` : ' (closed before the run ended)'}`);
    }
    await sleep(Math.min(5000, 250 * 2 ** failures));
  }
}

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
  return saved;
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
      showObject(false, { runId: body.runId, workflow: body.automationId, status: body.status, ...(body.error ? { error: body.error } : {}) });
      for (const [index, step] of Object.entries(body.stepInfo ?? {})) process.stdout.write(`  step ${index} ${step.name}: ${step.status}\n`);
    }
  });
  runs.command('results <runId>').option('--download <dir>', 'save every result file under DIR/step-N/')
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
  runs.command('cancel <runId>').description('Temporal cancellation: the run ends FAILED, error "the run was cancelled"')
    .action(async (runId: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = (await c.client.request<Row>('POST', `/api/v1/runs/${enc(runId)}/cancel`)).body;
      if (c.json) printJson(body);
      else process.stdout.write(`cancellation of ${runId} requested\n`);
    });
}

interface ApprovalsBody { runId: string; status: string; approvals: { stepIndex: number; stepName?: string; message?: string; deadline: string; required: number; approvers: { approver: string; decided: boolean; link?: string }[] }[] }

async function decide(c: CliContext, runId: string, decision: 'approve' | 'reject', o: { approver?: string; comment?: string }): Promise<void> {
  const body = await c.client.get<ApprovalsBody>(`/api/v1/runs/${enc(runId)}/approvals`);
  const pending = body.approvals[0];
  if (!pending) throw new CliError(`run ${runId} is not waiting for an approval (${body.status})`);
  const open = pending.approvers.filter((a) => !a.decided && a.link);
  const chosen = o.approver ? open.find((a) => a.approver.toLowerCase() === o.approver!.toLowerCase()) : open[0];
  if (!chosen?.link) throw new CliError(o.approver ? `${o.approver} is not an undecided approver of step ${pending.stepIndex}` : 'no undecided approver left');
  // The approver's own signed link records the decision in that approver's name (via "link").
  const link = new URL(chosen.link);
  const form = new URLSearchParams({ decision, ...(o.comment ? { comment: o.comment } : {}) });
  await c.client.request('POST', `${link.pathname}${link.search}`, { auth: 'none', raw: { contentType: 'application/x-www-form-urlencoded', data: form.toString() }, headers: { Accept: 'text/html' } });
  const result = { runId, stepIndex: pending.stepIndex, approver: chosen.approver, decision };
  if (c.json) printJson(result);
  else process.stdout.write(`${decision === 'approve' ? 'approved' : 'rejected'} step ${pending.stepIndex} of ${runId} as ${chosen.approver}\n`);
}

export function approvalCommands(program: Command): void {
  const ap = program.command('approvals').description('pending approvals of runs');
  ap.command('list <runId>').action(async (runId: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<ApprovalsBody>(`/api/v1/runs/${enc(runId)}/approvals`);
    const rows = body.approvals.flatMap((a) => a.approvers.map((p) => ({ stepIndex: a.stepIndex, step: a.stepName, approver: p.approver, decided: p.decided, deadline: a.deadline })));
    show(c.json, body, rows, ['stepIndex', 'step', 'approver', 'decided', 'deadline']);
  });
  for (const decision of ['approve', 'reject'] as const) {
    ap.command(`${decision} <runId>`).option('--approver <email>', 'decide as this approver (default: the first undecided one)').option('--comment <text>')
      .action(async (runId: string, o: { approver?: string; comment?: string }, cmd: Command) => decide(contextOf(cmd), runId, decision, o));
  }
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
      const window = waitTotal === undefined ? undefined : Math.min(60, Math.ceil(waitTotal));
      const progress = new Progress();
      if (window) progress.update(`waiting for the run (up to ${window} s)…`);
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
      let final: Row;
      if (reply.status === 200 && isRecord(reply.body)) final = reply.body;
      else {
        const statusPath = `/ext/webhook/${enc(c.apiKey)}/runs/${enc(automationId)}/${enc(runId)}`;
        await follow(c, { stream: `${statusPath}/status/stream`, status: `${statusPath}/status`, auth: 'none', runId }, Math.max(1, waitTotal - (window ?? 0)), false);
        final = (await c.client.request<Row>('GET', `${statusPath}/results`, { auth: 'none' })).body;
      }
      const status = typeof final.status === 'string' ? final.status : 'FAILED';
      if (c.json) printJson(final);
      else showObject(false, { runId, workflow: automationId, status, ...(final.error ? { error: final.error } : {}) });
      process.exitCode = exitCodeFor(status);
    });
}
