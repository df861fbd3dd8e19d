import assert from 'node:assert/strict';
import http from 'node:http';
import type { Socket } from 'node:net';
import { runHttpStep } from '../../activities/steps/http/http-step';
import { HttpStepSchema, type HttpStep } from '../../activities/steps/http/schema';
import type { InterpolationContext } from '../../src/common/interpolate';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { eventually } from '../support/eventually';
import { listenOnLoopback } from '../support/loopback';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  url: string;
  host: string;
  received: Received[];
  close(): Promise<void>;
}

async function startServer(handler: (req: Received, res: http.ServerResponse) => void): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      handler(r, res);
    });
  });
  const { url, port, close } = await listenOnLoopback(server);
  return { url, host: `127.0.0.1:${port}`, received, close };
}

function httpStep(fields: Record<string, unknown>): HttpStep {
  return HttpStepSchema.parse({ name: 'call', type: 'http', ...fields });
}

function context(): InterpolationContext {
  return {
    inputs: { token: 's3cr3t-token', id: 42, name: 'Ada' },
    steps: { '1': { result: 'first', json: { n: 7 }, exitCode: 0 } },
    run: { id: `run-${Math.random().toString(36).slice(2)}`, automationId: 'a1', automationVersion: 1, triggerId: 't1', started: '2024-01-01T00:00:00Z' },
  };
}

const allowed = { allowPrivateNetwork: true };

describe('runHttpStep', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('completes with a JSON result when the answer is JSON', async () => {
    server = await startServer((_req, res) => res.setHeader('content-type', 'application/json; charset=utf-8').end('{"ok":true}'));
    const execution = await runHttpStep(httpStep({ url: `${server.url}/items` }), context(), allowed);
    assert.equal(execution.status, 'COMPLETE');
    assert.equal(execution.exitCode, 0);
    assert.equal(execution.resultType, 'json');
    assert.equal(execution.result, '{"ok":true}');
    assert.match(execution.stdout, /^GET http:\/\/127\.0\.0\.1:\d+\/items -> 200 \(\d+ ms, 11 bytes\)\n$/);
  });

  it('answers plaintext when a JSON content-type carries text that does not parse', async () => {
    server = await startServer((_req, res) => res.setHeader('content-type', 'application/json').end('not json'));
    const execution = await runHttpStep(httpStep({ url: server.url }), context(), allowed);
    assert.equal(execution.resultType, 'plaintext');
    assert.equal(execution.result, 'not json');
  });

  it('interpolates the URL, header values and a string body', async () => {
    server = await startServer((_req, res) => res.end('ok'));
    const step = httpStep({
      method: 'POST',
      url: `${server.url}/users/{{inputs.id}}?from={{steps.1.result}}`,
      headers: { 'x-run': '{{run.id}}' },
      body: 'hello {{inputs.name}}',
    });
    const ctx = context();
    await runHttpStep(step, ctx, allowed);
    const got = server.received[0];
    assert.equal(got?.url, '/users/42?from=first');
    assert.equal(got?.headers['x-run'], ctx.run.id);
    assert.equal(got?.body, 'hello Ada');
  });

  it('sends an object body as JSON with its interpolated leaves', async () => {
    server = await startServer((_req, res) => res.end());
    await runHttpStep(httpStep({ method: 'POST', url: server.url, body: { id: '{{inputs.id}}', greeting: 'hi {{inputs.name}}', n: '{{steps.1.json.n}}' } }), context(), allowed);
    assert.equal(server.received[0]?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(server.received[0]?.body ?? ''), { id: 42, greeting: 'hi Ada', n: 7 });
  });

  it('keeps a content-type the step sets for an object body', async () => {
    server = await startServer((_req, res) => res.end());
    await runHttpStep(httpStep({ method: 'POST', url: server.url, headers: { 'Content-Type': 'application/vnd.api+json' }, body: { a: 1 } }), context(), allowed);
    assert.equal(server.received[0]?.headers['content-type'], 'application/vnd.api+json');
  });

  it('never logs the query string or header values', async () => {
    server = await startServer((_req, res) => res.end());
    const execution = await runHttpStep(httpStep({
      url: `${server.url}/hook?key={{inputs.token}}`,
      headers: { authorization: 'Bearer {{inputs.token}}' },
    }), context(), allowed);
    assert.equal(server.received[0]?.headers.authorization, 'Bearer s3cr3t-token');
    assert.doesNotMatch(execution.stdout, /s3cr3t|key=/);
    assert.match(execution.stdout, /\/hook -> 200/);
  });

  it('fails on a non-2xx answer, keeping the body as the result', async () => {
    server = await startServer((_req, res) => res.writeHead(500).end('boom'));
    const execution = await runHttpStep(httpStep({ url: server.url }), context(), allowed);
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.equal(execution.error, `HTTP 500 from ${server.host}`);
    assert.equal(execution.result, 'boom');
    assert.match(execution.stdout, / -> 500 /);
  });

  it('completes on a non-2xx answer when failOnHttpError is false', async () => {
    server = await startServer((_req, res) => res.writeHead(404).end('missing'));
    const execution = await runHttpStep(httpStep({ url: server.url, failOnHttpError: false }), context(), allowed);
    assert.equal(execution.status, 'COMPLETE');
    assert.equal(execution.exitCode, 0);
    assert.equal(execution.result, 'missing');
  });

  it('fails with a refusal when the destination is private and private networks are not allowed', async () => {
    server = await startServer((_req, res) => res.end('internal'));
    const execution = await runHttpStep(httpStep({ url: server.url }), context(), { allowPrivateNetwork: false });
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /refused/);
    assert.equal(server.received.length, 0);
  });

  it('fails on a body over the size limit', async () => {
    server = await startServer((_req, res) => res.end('x'.repeat(4096)));
    const execution = await runHttpStep(httpStep({ url: server.url }), context(), { allowPrivateNetwork: true, maxResponseBytes: 1024 });
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /larger than 1024 bytes/);
  });

  it('times out with exit code 124 when the server does not answer in time', async () => {
    server = await startServer(() => { /* never answers */ });
    const execution = await runHttpStep(httpStep({ url: server.url, timeoutMs: 200 }), context(), allowed);
    assert.equal(execution.status, 'TIMEOUT');
    assert.equal(execution.exitCode, 124);
    assert.match(execution.error ?? '', /200 ms/);
  });

  it('fails on a network error', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const execution = await runHttpStep(httpStep({ url: closed.url }), context(), allowed);
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /ECONNREFUSED/);
  });

  it('fails on a URL that does not parse, without echoing it', async () => {
    const execution = await runHttpStep(httpStep({ url: '{{inputs.token}}' }), context(), allowed);
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.doesNotMatch(`${execution.error} ${execution.stdout}`, /s3cr3t/);
  });
});

describe('the http step of a cancelled run', () => {
  let fg: TestFlowgate | undefined;
  let server: { close(): Promise<void> } | undefined;
  afterEach(async () => {
    await server?.close();
    await fg?.stop();
    server = undefined;
    fg = undefined;
  });

  it('closes its connection on the next heartbeat after the cancel (well before the 8 s default throttle), and the run ends FAILED', async () => {
    fg = await startTestFlowgate();
    // accepts the request and never answers, noting when its socket closes
    const requests: Socket[] = [];
    const closedAt = new Map<Socket, number>();
    const silent = http.createServer((req) => {
      requests.push(req.socket);
      req.socket.once('close', () => closedAt.set(req.socket, Date.now()));
    });
    const listening = await listenOnLoopback(silent);
    server = listening;
    const p = await publishWorkflow(fg, {
      name: `hangs-${Math.random().toString(36).slice(2)}`,
      steps: [{ name: 'Call a silent upstream', type: 'http', url: `${listening.url}/never`, timeoutMs: 120_000 }],
    });
    const response = await trigger(fg, p, {});
    assert.equal(response.status, 200);
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    assert.ok(runId);

    const deadline = Date.now() + 30_000;
    while (requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const socket = requests[0];
    assert.ok(socket, 'the http step reached the upstream');

    // well into the request, so that a cancellation must ride on a later heartbeat than the first:
    // wait until Temporal has recorded a heartbeat of the step
    const { client } = fg;
    await eventually(async () => {
      const { raw } = await client.workflow.getHandle(runId).describe();
      return raw.pendingActivities?.some((a) => a.lastHeartbeatTime) ? true : undefined;
    }, 'a heartbeat of the http step');
    assert.equal(closedAt.has(socket), false);
    const cancelledAt = Date.now();
    await fg.client.workflow.getHandle(runId).cancel();
    while (!closedAt.has(socket) && Date.now() - cancelledAt < 5000) await new Promise((resolve) => setTimeout(resolve, 10));
    const closed = closedAt.get(socket);
    // ~0.4 s on an idle machine (heartbeat throttle 400 ms); the bound only separates that from Temporal's default
    // throttle (8 s with a 10 s heartbeat timeout) so that a loaded machine does not fail it.
    assert.ok(closed !== undefined, 'the connection was still open 5 s after the cancel');

    const final = await pollStatus(fg, p, runId, undefined, 30_000);
    assert.equal(final.status, 'FAILED');
  });
});
