import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runningEmbeddedAddress, temporalCliAddress } from '../../temporal/cli-address';
import { serverPidFile } from '../../temporal/embedded';
import { internalPorts, serverConfigYaml } from '../../temporal/server-config';

describe('npm run temporal: which server it addresses', () => {
  let dataDir: string;
  let dbFile: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-cli-address-'));
    dbFile = path.join(dataDir, 'temporal.sqlite');
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A server configuration like the embedded Temporal's, its frontend on `port`. */
  function writeConfig(file: string, port: number): void {
    writeFileSync(file, serverConfigYaml({
      ip: '127.0.0.1', ports: internalPorts(port), persistence: { kind: 'sqlite', file: dbFile, memoryName: 'x' }, historyShards: 1, dynamicConfigFile: '/dev/null',
    }));
  }

  /** A live process whose command line reads like the embedded Temporal server's (what /proc shows of it). */
  async function fakeServer(argv: string[]): Promise<number> {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)', '--', ...argv], { stdio: 'ignore' });
    children.push(child);
    await new Promise((resolve) => child.once('spawn', resolve));
    return child.pid ?? 0;
  }

  function writePidFile(server: number): void {
    writeFileSync(serverPidFile(dbFile), JSON.stringify({ server, guardian: process.pid, owner: process.pid }));
  }

  it('reads the embedded Temporal of the data dir from its pid file, the server\'s command line and its configuration', async function () {
    if (process.platform !== 'linux') this.skip();
    writeConfig(`${dbFile}.server.yaml`, 17444);
    writePidFile(await fakeServer(['--config-file', `${dbFile}.server.yaml`, '--allow-no-auth', 'start']));
    assert.equal(await runningEmbeddedAddress(dbFile), '127.0.0.1:17444');
    // the running server wins over an exported TEMPORAL_DEV_PORT that may be another shell's
    assert.deepEqual(await temporalCliAddress({ args: ['workflow', 'list'], dataDir, devPortEnv: '7233' }), ['--address', '127.0.0.1:17444']);
  });

  it('ignores a pid file naming a process that is not this data dir\'s embedded Temporal, or none', async function () {
    if (process.platform !== 'linux') this.skip();
    writeConfig(`${dbFile}.server.yaml`, 17445);
    writePidFile(await fakeServer(['--config-file', path.join(dataDir, 'other.sqlite.server.yaml'), 'start']));
    assert.equal(await runningEmbeddedAddress(dbFile), undefined);
    writePidFile(2 ** 22 + 17);
    assert.equal(await runningEmbeddedAddress(dbFile), undefined);
  });

  it('takes --address, then TEMPORAL_ADDRESS, then TEMPORAL_DEV_PORT when set, and otherwise refuses to guess, naming what to set', async () => {
    assert.deepEqual(await temporalCliAddress({ args: ['workflow', 'list', '--address', 'x:1'], dataDir, address: 'y:2' }), []);
    assert.deepEqual(await temporalCliAddress({ args: ['workflow', 'list'], dataDir, address: 'y:2', devPortEnv: '7300' }), ['--address', 'y:2']);
    assert.deepEqual(await temporalCliAddress({ args: ['workflow', 'list'], dataDir, devPortEnv: '7300' }), ['--address', '127.0.0.1:7300']);
    await assert.rejects(temporalCliAddress({ args: ['workflow', 'list'], dataDir }), (err: Error) => {
      assert.ok(err.message.includes(dataDir), err.message);
      assert.match(err.message, /TEMPORAL_ADDRESS/);
      assert.match(err.message, /TEMPORAL_DEV_PORT/);
      assert.match(err.message, /--address/);
      return true;
    });
  });
});
