import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freeTemporalFrontendPort, temporalBinaries, temporalCliPath } from '../setup/root-hooks';
import { freePort, portIsFree } from '../../temporal/ports';
import { startMain } from '../support/processes';
import { temporalCliAddress } from '../../temporal/cli-address';
import { temporalUiLink } from '../../src/cli/runs';

describe('flowgate main process (npm start)', () => {
  it('starts the embedded Temporal (server >= 1.31 and Web UI), worker and gateway, prints where they listen, and stops everything on SIGTERM', async function () {
    this.timeout(120_000);
    const parent = mkdtempSync(path.join(os.tmpdir(), 'flowgate-main-'));
    const dataDir = path.join(parent, 'not-yet-created', 'data'); // a first start creates it
    const [devPort, uiPort] = [await freeTemporalFrontendPort(), await freePort()];
    const { binaries, uiServer } = temporalBinaries();
    const child = startMain({ // PORT 0: the gateway binds a free port and the banner names it
      FLOWGATE_DATA_DIR: dataDir, PORT: '0', TEMPORAL_DEV_PORT: String(devPort), TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_SERVER_PATH: binaries.server, TEMPORAL_UI_SERVER_PATH: uiServer,
    });
    try {
      await child.waitForLine(/admin token \(shown once, also in \S+\): \S+\n/); // the banner's last line
      const port = Number(/gateway listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(child.output())?.[1]);
      assert.ok(port > 0, child.output());
      assert.match(child.output(), new RegExp(`Web UI at http://127\\.0\\.0\\.1:${uiPort}`));
      const token = /admin token \(shown once, also in (\S+)\): (\S+)/.exec(child.output());
      assert.ok(token, child.output());
      assert.equal(statSync(token[1] ?? '').mode & 0o777, 0o600);
      assert.equal(statSync(path.join(dataDir, 'temporal.sqlite')).isFile(), true);

      // the embedded default is a current Temporal (Standalone Activities need 1.31) on SQLite
      const described = JSON.parse((await promisify(execFile)(temporalCliPath(), ['operator', 'cluster', 'describe', '--address', `127.0.0.1:${devPort}`, '-o', 'json'])).stdout) as { serverVersion: string; persistenceStore: string };
      const [major = 0, minor = 0] = described.serverVersion.split('.').map(Number);
      assert.ok(major > 1 || (major === 1 && minor >= 31), described.serverVersion);
      assert.equal(described.persistenceStore, 'sqlite');

      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.deepEqual(await health.json(), { status: 'ok', temporal: 'ok', registry: 'ok' });
      const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
      assert.equal(ui.status, 200);
      const created = await fetch(`http://127.0.0.1:${port}/api/v1/api-keys`, { method: 'POST', headers: { Authorization: `Bearer ${token[2]}` } });
      assert.equal(created.status, 201);

      // `npm run temporal` finds this data dir's dev server without TEMPORAL_DEV_PORT (pid file + /proc).
      if (process.platform === 'linux') assert.deepEqual(await temporalCliAddress({ args: ['workflow', 'list'], dataDir }), ['--address', `127.0.0.1:${devPort}`]);
      // A run's status names its page in the dev server's Web UI (`flowgate runs open`), and the page is there.
      const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
        const response = await fetch(`http://127.0.0.1:${port}${pathname}`, { method, headers: { Authorization: `Bearer ${token[2]}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        assert.ok(response.ok, `${method} ${pathname}: ${response.status}`);
        return response.json() as Promise<T>;
      };
      const workflow = await admin<{ id: string }>('POST', '/api/v1/workflows', { name: 'ui-link', steps: [{ name: 'One', type: 'template', template: 'one' }] });
      await admin('POST', `/api/v1/workflows/${workflow.id}/publish`);
      const trigger = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: workflow.id });
      const { key } = await created.json() as { key: string };
      const started = await fetch(`http://127.0.0.1:${port}/ext/triggers/${trigger.id}`, { method: 'POST', headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' }, body: '{}' });
      const runId = started.headers.get('x-pf-run-id') ?? '';
      assert.ok(runId, `trigger call: ${started.status}`);
      const status = await fetch(`http://127.0.0.1:${port}/api/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${token[2]}` } });
      assert.equal(status.status, 200);
      const page = `http://127.0.0.1:${uiPort}/namespaces/default/workflows/${runId}`;
      assert.equal(status.headers.get('link'), `<${page}>; rel="temporal-ui"`);
      assert.equal(temporalUiLink(status.headers.get('link')), page);
      assert.equal((await fetch(page)).status, 200);

      child.process.kill('SIGTERM');
      assert.deepEqual(await child.exited, { code: 0, signal: null });
      assert.equal(await portIsFree(devPort), true, 'no orphaned Temporal server');
      assert.equal(await portIsFree(port), true);
    } finally {
      child.process.kill('SIGKILL');
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('refuses a bad configuration at start, naming the variable', async () => {
    const child = startMain({ FLOWGATE_SYNC_WAIT_SECONDS: '90' });
    assert.deepEqual(await child.exited, { code: 2, signal: null });
    assert.match(child.output(), /FLOWGATE_SYNC_WAIT_SECONDS: must be at most 60/);
  });
});
