import assert from 'node:assert/strict';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type StatusBody, type TestFlowgate } from '../support/flowgate';

interface SseEvent { id?: string; event: string; data: unknown }

/**
 * Reads an SSE response; `stopAfter` cuts the connection (aborts the fetch) once that many events
 * with an id arrived, as a dropped connection would.
 */
async function readEvents(response: Response, stopAfter: number | undefined, abort: AbortController): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body!.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
        if (fields.event === undefined) continue;
        events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data ?? 'null') });
        if (stopAfter !== undefined && events.filter((e) => e.id !== undefined).length >= stopAfter) {
          abort.abort();
          return events;
        }
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  }
  return events;
}

describe('live run status', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  const statusPath = (p: Published, runId: string) => `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`;

  it('answers a long poll within a second of a delay step finishing, with the new ETag', async function () {
    this.timeout(60_000);
    const p = await publishWorkflow(fg, {
      name: 'long-poll', steps: [{ name: 'Wait', type: 'delay', duration: '3s' }, { name: 'Next', type: 'delay', duration: '30s' }],
    });
    const runId = (await trigger(fg, p)).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.stepStatus['1'] === 'PAUSED', 30_000);
    const first = await fg.request(statusPath(p, runId));
    const etag = first.headers.get('ETag') ?? '';
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    await first.json();

    const polled = await fg.request(statusPath(p, runId), { headers: { Prefer: 'wait=20', 'If-None-Match': etag } });
    const answeredAt = Date.now();
    assert.equal(polled.status, 200);
    assert.equal(polled.headers.get('Preference-Applied'), 'wait=20');
    assert.notEqual(polled.headers.get('ETag'), etag);
    const body = (await polled.json()) as StatusBody;
    // The first change after the pause: the timer fired (RUNNING again), or already COMPLETE.
    const seen = body.stepStatus['1'] ?? '';
    assert.ok(['RUNNING', 'COMPLETE'].includes(seen), seen);

    // When the step finished, by the workflow's own clock (its transition in the status stream).
    const admin = await fetch(`${fg.url}/api/v1/runs/${runId}/stream`, { headers: { Authorization: `Bearer ${fg.adminToken}` }, signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    const abort = new AbortController();
    const events = admin ? await readEvents(admin, 4, abort) : [];
    const finished = events.find((e, i) => i > 1 && (e.data as { stepIndex: number; status: string }).stepIndex === 1 && (e.data as { status: string }).status === seen);
    assert.ok(finished, `the stream shows step 1 leaving its wait: ${JSON.stringify(events)}`);
    const lag = answeredAt - Date.parse((finished.data as { at: string }).at);
    assert.ok(lag < 1000, `the long poll answered ${lag} ms after the step finished`);
    await fg.admin('POST', `/api/v1/runs/${runId}/cancel`);
  });

  it('answers 304 to an unchanged ETag, at once and after a long poll that saw no change', async function () {
    this.timeout(60_000);
    const p = await publishWorkflow(fg, { name: 'etag', steps: [{ name: 'Wait', type: 'delay', duration: '60s' }] });
    const runId = (await trigger(fg, p)).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED', 30_000);
    const first = await fg.request(statusPath(p, runId));
    const etag = first.headers.get('ETag') ?? '';
    await first.json();
    const again = await fg.request(statusPath(p, runId), { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('ETag'), etag);
    assert.equal(await again.text(), '');
    const waited = await fg.request(statusPath(p, runId), { headers: { 'If-None-Match': etag, Prefer: 'wait=2' } });
    assert.equal(waited.status, 304, 'nothing changed within the wait');
    const other = await fg.request(statusPath(p, runId), { headers: { 'If-None-Match': '"something-else"' } });
    assert.equal(other.status, 200);
    assert.equal((await other.json() as StatusBody).status, 'PAUSED');
    // The admin status call takes the same headers.
    const adminStatus = await fg.request(`/api/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${fg.adminToken}`, 'If-None-Match': etag } });
    assert.equal(adminStatus.status, 304);
    await fg.admin('POST', `/api/v1/runs/${runId}/cancel`);
  });

  it('streams step transitions; a stream cut and resumed with Last-Event-ID misses and repeats nothing', async function () {
    this.timeout(90_000);
    const p = await publishWorkflow(fg, {
      name: 'sse', steps: [
        { name: 'One', type: 'template', template: 'one' },
        { name: 'Wait', type: 'delay', duration: '2s' },
        { name: 'Two', type: 'template', template: 'two' },
        { name: 'Again', type: 'delay', duration: '2s' },
        { name: 'Three', type: 'template', template: 'three' },
      ],
    });
    const runId = (await trigger(fg, p)).headers.get('X-Pf-Run-Id') ?? '';
    const url = `${fg.url}${statusPath(p, runId)}/stream`;
    const cut = new AbortController();
    const firstPart = await readEvents(await fetch(url, { signal: cut.signal }), 3, cut);
    const lastId = firstPart.filter((e) => e.id !== undefined).at(-1)?.id ?? '';
    await new Promise((resolve) => setTimeout(resolve, 2500)); // transitions happen while disconnected
    const rest = await readEvents(await fetch(url, { headers: { 'Last-Event-ID': lastId } }), undefined, new AbortController());
    const all = [...firstPart, ...rest];
    const ids = all.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    assert.deepEqual(ids, ids.map((_, i) => i + 1), `ids 1, 2, 3… once each: ${ids.join(',')}`);
    assert.equal(all.filter((e) => e.event === 'gap').length, 0);
    const steps = all.filter((e) => e.event === 'step').map((e) => { const d = e.data as { stepIndex: number; status: string }; return `${d.stepIndex}:${d.status}`; });
    assert.deepEqual(steps, [
      '1:RUNNING', '1:COMPLETE', '2:RUNNING', '2:PAUSED', '2:RUNNING', '2:COMPLETE', '3:RUNNING', '3:COMPLETE',
      '4:RUNNING', '4:PAUSED', '4:RUNNING', '4:COMPLETE', '5:RUNNING', '5:COMPLETE',
    ]);
    const end = all.at(-1);
    assert.equal(end?.event, 'end');
    assert.equal((end?.data as StatusBody).status, 'COMPLETE');
    // Resuming after the end: nothing more, and 204 tells an EventSource to stop.
    const after = await fetch(url, { headers: { 'Last-Event-ID': String(ids.at(-1)) } });
    assert.equal(after.status, 204);
    // A finished run's stream from the start repeats the same ids and events.
    const replay = await readEvents(await fetch(url), undefined, new AbortController());
    assert.deepEqual(replay.map((e) => [e.id, e.event]), all.map((e) => [e.id, e.event]));
    const { body } = await getJson<StatusBody>(fg, statusPath(p, runId));
    assert.equal(body.status, 'COMPLETE');
  });

  it('refuses a Last-Event-ID that is not an event id', async () => {
    const p = await publishWorkflow(fg, { name: 'sse-bad', steps: [{ name: 'One', type: 'template', template: 'x' }] });
    const runId = (await trigger(fg, p)).headers.get('X-Pf-Run-Id') ?? '';
    const response = await fg.request(`${statusPath(p, runId)}/stream`, { headers: { 'Last-Event-ID': 'abc' } });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_last_event_id');
  });
});
