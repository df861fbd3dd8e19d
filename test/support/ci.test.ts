/**
 * A missing peer cannot make the suite pass by skipping: under CI=true it fails with a message
 * naming the peer; elsewhere it is a loud skip. Each case runs the fixture in a child mocha.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';

const MOCHA = require.resolve('mocha/bin/mocha.js');
const FIXTURE = path.join(__dirname, 'fixtures', 'missing-peer.fixture.js');

interface Outcome {
  code: number;
  output: string;
}

function runFixture(ci: string | undefined): Promise<Outcome> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  if (ci !== undefined) env.CI = ci;
  return new Promise((resolve) => {
    execFile(process.execPath, [MOCHA, '--no-config', '--reporter', 'spec', FIXTURE], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

describe('missing peers (test/support/ci)', function () {
  this.timeout(60_000);

  it('fails the test under CI=true with a message that names the peer', async () => {
    const { code, output } = await runFixture('true');
    assert.equal(code, 1, output);
    assert.match(output, /1 failing/);
    assert.match(output, /missing peer under CI=true .*the fixture peer: it does not exist/);
  });

  it('skips loudly outside CI', async () => {
    for (const ci of [undefined, 'false']) {
      const { code, output } = await runFixture(ci);
      assert.equal(code, 0, output);
      assert.match(output, /1 pending/);
      assert.match(output, /!!! SKIPPING the fixture peer: it does not exist/);
    }
  });
});
