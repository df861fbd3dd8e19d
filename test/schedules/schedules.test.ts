import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client, ScheduleNotFoundError } from '@temporalio/client';
import { EncryptionCodec } from '../../src/crypto/payload-codec';
import { scheduleIdFor } from '../../src/schedules/schedule-service';
import { getJson, publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { temporalAddress, temporalCliPath } from '../setup/root-hooks';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(__dirname, '../../src/cli/main.js');

const hello = {
  name: 'scheduled-hello',
  inputSchema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  steps: [{ name: 'Hello', type: 'template', format: 'plaintext', template: 'Hello {{inputs.name}} from {{run.id}} at {{run.started}}' }],
};

interface ScheduleState {
  paused: boolean; note: string | null; automationVersion: number | null; nextFireTimes: string[];
  recentRuns: { runId: string; scheduledAt: string; startedAt: string }[]; runningRuns: string[]; actionsTaken: number;
}
interface TriggerWithSchedule {
  id: string; workflowId: string;
  schedule: null | { scheduleId: string; revision: number; interval?: { every: string }; cron?: string[]; timeZone: string; overlap: string; state: ScheduleState };
}
interface ResultsBody { id: string; type: string; status: string; started: string; triggerId?: string; results: { exitCode: number; resultUrls: Record<string, { url: string }> }[] }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

describe('scheduled triggers (Temporal Schedules)', () => {
  let fg: TestFlowgate;
  let p: Published;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  const every2s = { interval: { every: '2s' }, inputs: { name: 'Ada' } };
  const triggerOf = async (triggerId: string) => {
    const got = await fg.admin<TriggerWithSchedule>('GET', `/api/v1/triggers/${triggerId}`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    return got.body;
  };
  const createScheduled = async (workflowId: string, schedule: unknown) => fg.admin<TriggerWithSchedule & { error?: string; message?: string }>('POST', '/api/v1/triggers', { workflowId, schedule });

  it('starts runs every 2 s that complete, poll with the organization\'s key and say type SCHEDULE', async () => {
    p = await publishWorkflow(fg, hello);
    const created = await createScheduled(p.workflowId, every2s);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.schedule?.scheduleId, scheduleIdFor(created.body.id));
    const triggerId = created.body.id;

    const state = await until('two scheduled runs', async () => {
      const t = await triggerOf(triggerId);
      return (t.schedule?.state.recentRuns.length ?? 0) >= 2 ? t.schedule!.state : undefined;
    });
    assert.ok(state.nextFireTimes.length > 0);
    assert.equal(state.automationVersion, 1);
    const [first, second] = state.recentRuns;
    assert.notEqual(first!.runId, second!.runId);
    assert.ok(first!.runId.startsWith(`${triggerId}-`), first!.runId);

    for (const run of [first!, second!]) {
      const statusPath = `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${encodeURIComponent(run.runId)}`;
      const status = await until(`run ${run.runId} to complete`, async () => {
        const s = await getJson<{ status: string; runId: string }>(fg, `${statusPath}/status`);
        return s.status === 200 && s.body.status === 'COMPLETE' ? s.body : undefined;
      });
      assert.equal(status.runId, run.runId);
      const results = await getJson<ResultsBody>(fg, `${statusPath}/results`);
      assert.equal(results.status, 200);
      assert.equal(results.body.type, 'SCHEDULE');
      assert.equal(results.body.id, run.runId);
      assert.equal(results.body.status, 'COMPLETE');
      // the run's own start, not the schedule's creation
      assert.ok(Math.abs(Date.parse(results.body.started) - Date.parse(run.startedAt)) < 5000, `${results.body.started} vs ${run.startedAt}`);
      const output = await fetch(results.body.results[0]!.resultUrls['output.txt']!.url);
      // the run sees its own ID and start time (workflows/run/scheduled-run.ts)
      assert.equal(await output.text(), `Hello Ada from ${run.runId} at ${results.body.started}`);
    }

    // the Temporal Web UI's summary of the schedule and of the runs it starts (src/common/run-labels.ts)
    const summary = `${hello.name} v1 · schedule of trigger ${triggerId}`;
    assert.equal((await fg.client.schedule.getHandle(scheduleIdFor(triggerId)).describe()).action.staticSummary, summary);
    assert.equal(await (await fg.client.workflow.getHandle(first!.runId).describe()).staticSummary(), summary);

    const trigger = await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}`);
    assert.ok(trigger.body.runs.some((r) => r.runId === first!.runId), 'scheduled runs are in the organization\'s run list');
    await fg.admin('DELETE', `/api/v1/triggers/${triggerId}`);
  });

  it('pause stops new runs and resume starts them again; the Temporal CLI lists the schedule', async () => {
    const created = await createScheduled(p.workflowId, every2s);
    assert.equal(created.status, 201);
    const triggerId = created.body.id;
    await until('a first run', async () => ((await triggerOf(triggerId)).schedule!.state.actionsTaken >= 1 ? true : undefined));

    const { stdout } = await until('the schedule in `temporal schedule list`', async () => {
      const listed = await execFileAsync(temporalCliPath(), ['schedule', 'list', '--address', temporalAddress(), '--namespace', 'default', '-o', 'json']);
      return listed.stdout.includes(scheduleIdFor(triggerId)) ? listed : undefined;
    });
    assert.ok(stdout.includes(scheduleIdFor(triggerId)));

    const paused = await fg.admin<{ state: ScheduleState }>('POST', `/api/v1/triggers/${triggerId}/schedule/pause`, { note: 'maintenance' });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.state.paused, true);
    assert.equal(paused.body.state.note, 'maintenance');
    // Watching for runs that do NOT start takes a window of time: this sleep is the behaviour under
    // test (the schedule fires every two seconds, so a schedule that ignored the pause would add about four).
    // A start already under way when the pause landed may still be counted: one at most.
    const before = (await triggerOf(triggerId)).schedule!.state.actionsTaken;
    await sleep(8000);
    const during = await triggerOf(triggerId);
    assert.ok(during.schedule!.state.actionsTaken - before <= 1, `no run starts while paused (${before} → ${during.schedule!.state.actionsTaken})`);
    assert.equal(during.schedule!.state.paused, true);

    const resumed = await fg.admin<{ state: ScheduleState }>('POST', `/api/v1/triggers/${triggerId}/schedule/resume`, {});
    assert.equal(resumed.body.state.paused, false);
    const whilePaused = during.schedule!.state.actionsTaken;
    await until('a run after resume', async () => ((await triggerOf(triggerId)).schedule!.state.actionsTaken > whilePaused ? true : undefined));
    await fg.admin('DELETE', `/api/v1/triggers/${triggerId}`);
  });

  it('deleting the trigger, or its workflow, deletes the Temporal schedule', async () => {
    const created = await createScheduled(p.workflowId, { ...every2s, paused: true });
    assert.equal(created.status, 201);
    const handle = fg.client.schedule.getHandle(scheduleIdFor(created.body.id));
    assert.equal((await handle.describe()).state.paused, true, 'created paused as asked');
    assert.equal((await fg.admin('DELETE', `/api/v1/triggers/${created.body.id}`)).status, 204);
    await assert.rejects(handle.describe(), ScheduleNotFoundError);

    const other = await publishWorkflow(fg, { ...hello, name: 'doomed' }, { schedule: { cron: '0 9 * * MON-FRI', timeZone: 'Europe/Berlin', inputs: { name: 'x' } } });
    const otherHandle = fg.client.schedule.getHandle(scheduleIdFor(other.triggerId));
    const described = await otherHandle.describe();
    assert.deepEqual(described.spec.timezone, 'Europe/Berlin');
    assert.equal((await fg.admin('DELETE', `/api/v1/workflows/${other.workflowId}`)).status, 204);
    await assert.rejects(otherHandle.describe(), ScheduleNotFoundError);
  });

  it('another organization can neither see, pause nor poll the schedule', async () => {
    const created = await createScheduled(p.workflowId, every2s);
    const triggerId = created.body.id;
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${Date.now()}` });
    const asOther = async (method: string, pathname: string, body?: unknown) => {
      const response = await fg.request(pathname, {
        method, headers: { Authorization: `Bearer ${org.body.adminToken}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined };
    };
    assert.equal((await asOther('GET', `/api/v1/triggers/${triggerId}`)).status, 404);
    assert.equal((await asOther('POST', `/api/v1/triggers/${triggerId}/schedule/pause`, {})).status, 404);
    assert.equal((await asOther('PUT', `/api/v1/triggers/${triggerId}/schedule`, every2s)).status, 404);
    assert.equal((await asOther('DELETE', `/api/v1/triggers/${triggerId}/schedule`)).status, 404);
    assert.deepEqual((await asOther('GET', '/api/v1/schedules')).body, { schedules: [] });
    assert.equal((await fg.client.schedule.getHandle(scheduleIdFor(triggerId)).describe()).state.paused, false);

    const run = await until('a run', async () => (await triggerOf(triggerId)).schedule!.state.recentRuns[0]);
    const otherKey = await asOther('POST', '/api/v1/api-keys', { name: 'other' });
    const status = await getJson(fg, `/ext/webhook/${String(otherKey.body?.key)}/runs/${p.workflowId}/${encodeURIComponent(run.runId)}/status`);
    assert.equal(status.status, 404);
    await fg.admin('DELETE', `/api/v1/triggers/${triggerId}`);
  });

  it('refuses bad schedules with 400 (and keeps no trigger), inputs that miss the schema with 422', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ cron: '61 * * * *', inputs: { name: 'a' } }, 400, /Minute is not in range|refused/],
      [{ cron: 'not a cron', inputs: { name: 'a' } }, 400, /refused/],
      [{ cron: '0 9 * * *', timeZone: 'Mars/Olympus', inputs: { name: 'a' } }, 400, /timeZone: unknown time zone/],
      [{ interval: { every: '2s' }, startAt: '2030-01-02T00:00:00Z', endAt: '2030-01-01T00:00:00Z', inputs: { name: 'a' } }, 400, /endAt: must be after startAt/],
      [{ interval: { every: 'soon' }, inputs: { name: 'a' } }, 400, /interval\.every/],
      [{ inputs: { name: 'a' } }, 400, /give `cron` or `interval`/],
      [{ interval: { every: '2s' }, overlap: 'SOMETIMES', inputs: { name: 'a' } }, 400, /overlap/],
      [{ interval: { every: '2s' }, inputs: { name: 5 } }, 422, /schedule\.inputs/],
    ];
    const before = (await fg.admin<{ triggers: unknown[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`)).body.triggers.length;
    for (const [schedule, status, message] of cases) {
      const refused = await createScheduled(p.workflowId, schedule);
      assert.equal(refused.status, status, `${JSON.stringify(schedule)} → ${JSON.stringify(refused.body)}`);
      assert.match(String(refused.body.message), message);
    }
    const after = (await fg.admin<{ triggers: unknown[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`)).body.triggers.length;
    assert.equal(after, before, 'a refused schedule leaves no trigger behind');
  });

  it('updates a schedule in place and moves it to a newly published version', async () => {
    const q = await publishWorkflow(fg, { ...hello, name: 'versioned' }, { schedule: { cron: '0 9 * * *', inputs: { name: 'v' } } });
    const updated = await fg.admin<{ cron: string[]; overlap: string; revision: number; state: ScheduleState }>('PUT', `/api/v1/triggers/${q.triggerId}/schedule`,
      { cron: ['30 7 * * MON'], timeZone: 'America/New_York', overlap: 'BUFFER_ONE', inputs: { name: 'w' } });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.revision, 2);
    const handle = fg.client.schedule.getHandle(scheduleIdFor(q.triggerId));
    let described = await handle.describe();
    assert.equal(described.policies.overlap, 'BUFFER_ONE');
    assert.equal(described.spec.timezone, 'America/New_York');
    assert.equal(new Date(updated.body.state.nextFireTimes[0]!).getUTCDay(), 1, 'next fire on a Monday');

    await fg.admin('PUT', `/api/v1/workflows/${q.workflowId}`, { ...hello, name: 'versioned', description: 'v2' });
    assert.equal((await fg.admin('POST', `/api/v1/workflows/${q.workflowId}/publish`)).status, 201);
    described = await handle.describe();
    assert.equal((described.action.memo as { automationVersion?: number }).automationVersion, 2);
    assert.equal(described.action.staticSummary, `versioned v2 · schedule of trigger ${q.triggerId}`);

    const refused = await fg.admin<{ message: string }>('PUT', `/api/v1/triggers/${q.triggerId}/schedule`, { cron: '99 * * * *', inputs: { name: 'w' } });
    assert.equal(refused.status, 400);
    const kept = await triggerOf(q.triggerId);
    assert.deepEqual(kept.schedule?.cron, ['30 7 * * MON'], 'a refused update keeps the schedule as it was');
    assert.equal((await handle.describe()).spec.timezone, 'America/New_York');
    await fg.admin('DELETE', `/api/v1/workflows/${q.workflowId}`);
  });

  it('reconciles: recreates a schedule lost in Temporal and deletes one whose trigger is gone', async () => {
    const q = await publishWorkflow(fg, { ...hello, name: 'reconciled' }, { schedule: { cron: '0 9 * * *', inputs: { name: 'r' } } });
    const lost = fg.client.schedule.getHandle(scheduleIdFor(q.triggerId));
    await lost.delete();
    // a gateway that died between deleting the registry row and the Temporal schedule
    const orphan = await publishWorkflow(fg, { ...hello, name: 'orphaned' }, { schedule: { cron: '0 9 * * *', inputs: { name: 'o' } } });
    assert.ok(await fg.registry.schedules.delete((await fg.registry.triggers.get(orphan.triggerId))!.orgId, orphan.triggerId));

    const counts = await fg.schedules.reconcile();
    assert.ok(counts.created >= 1 && counts.deleted >= 1, JSON.stringify(counts));
    assert.equal((await lost.describe()).scheduleId, scheduleIdFor(q.triggerId));
    await assert.rejects(fg.client.schedule.getHandle(scheduleIdFor(orphan.triggerId)).describe(), ScheduleNotFoundError);
    await fg.admin('DELETE', `/api/v1/workflows/${q.workflowId}`);
    await fg.admin('DELETE', `/api/v1/workflows/${orphan.workflowId}`);
  });

  it('reconciles past a schedule sealed under a data key this process does not have (another deployment on the namespace)', async () => {
    // a schedule named like flowgate's whose memo another key ring sealed: its memo cannot be opened here
    const foreignCodec = new EncryptionCodec({ keys: [{ id: 'foreign-ring', key: randomBytes(32) }], encrypt: true });
    const foreign = new Client({ connection: fg.client.connection, namespace: 'default', dataConverter: { payloadCodecs: [foreignCodec] } });
    const foreignId = scheduleIdFor(`trg_foreign${randomBytes(6).toString('hex')}`);
    await foreign.schedule.create({
      scheduleId: foreignId, spec: { cronExpressions: ['0 9 * * *'] }, memo: { flowgate: { taskQueue: fg.taskQueue, triggerId: 'trg_foreign' } },
      action: { type: 'startWorkflow', workflowType: 'runAutomation', taskQueue: `${fg.taskQueue}-foreign`, args: [] },
    });
    try {
      const q = await publishWorkflow(fg, { ...hello, name: 'reconciled-past-foreign' }, { schedule: { cron: '0 9 * * *', inputs: { name: 'f' } } });
      await fg.client.schedule.getHandle(scheduleIdFor(q.triggerId)).delete();
      const counts = await fg.schedules.reconcile();
      assert.ok(counts.created >= 1, JSON.stringify(counts));
      assert.equal((await fg.client.schedule.getHandle(scheduleIdFor(q.triggerId)).describe()).scheduleId, scheduleIdFor(q.triggerId));
      // left alone: not this process's to judge
      assert.equal((await fg.client.workflowService.describeSchedule({ namespace: 'default', scheduleId: foreignId })).schedule?.action?.startWorkflow?.taskQueue?.name, `${fg.taskQueue}-foreign`);
      await fg.admin('DELETE', `/api/v1/workflows/${q.workflowId}`);
    } finally {
      await fg.client.workflowService.deleteSchedule({ namespace: 'default', scheduleId: foreignId });
    }
  });

  it('the flowgate CLI lists, pauses and resumes schedules', async () => {
    const q = await publishWorkflow(fg, { ...hello, name: 'cli-scheduled' }, { schedule: { cron: '0 9 * * *', inputs: { name: 'c' } } });
    const env = { PATH: process.env.PATH ?? '', HOME: fg.dataDir, FLOWGATE_URL: fg.url, FLOWGATE_TOKEN: fg.adminToken };
    const cli = async (...args: string[]) => (await execFileAsync(process.execPath, [CLI, ...args], { env, timeout: 60_000 })).stdout;
    assert.match(await cli('schedules', 'list'), new RegExp(q.triggerId));
    assert.match(await cli('schedules', 'pause', q.triggerId, '--note', 'from the CLI'), /paused flowgate-/);
    const listed = JSON.parse(await cli('--json', 'schedules', 'list')) as { schedules: { triggerId: string; state: ScheduleState }[] };
    const mine = listed.schedules.find((s) => s.triggerId === q.triggerId);
    assert.equal(mine?.state.paused, true);
    assert.equal(mine?.state.note, 'from the CLI');
    assert.match(await cli('schedules', 'resume', q.triggerId), /resumed/);
    assert.equal((await fg.client.schedule.getHandle(scheduleIdFor(q.triggerId)).describe()).state.paused, false);
    await fg.admin('DELETE', `/api/v1/workflows/${q.workflowId}`);
  });
});
