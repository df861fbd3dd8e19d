/**
 * The TLS options both Temporal connections get from the configuration (Temporal Cloud with mTLS or
 * an API key, a self-hosted cluster with its own CA): files are read, nothing is invented.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { tlsOptions } from '../../temporal/client';

describe('tlsOptions', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-tls-'));
    writeFileSync(path.join(dir, 'client.pem'), 'CERT PEM');
    writeFileSync(path.join(dir, 'client.key'), 'KEY PEM');
    writeFileSync(path.join(dir, 'ca.pem'), 'CA PEM');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives no TLS for a plain address', () => {
    assert.equal(tlsOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' }).temporal), undefined);
  });

  it('gives default TLS (the system roots) for an API key', () => {
    assert.deepEqual(tlsOptions(loadConfig({ TEMPORAL_API_KEY: 'k' }).temporal), {});
  });

  it('reads the client certificate pair, the CA and the server name from the configured files', () => {
    const tls = tlsOptions(loadConfig({
      TEMPORAL_TLS_CERT_FILE: path.join(dir, 'client.pem'), TEMPORAL_TLS_KEY_FILE: path.join(dir, 'client.key'),
      TEMPORAL_TLS_CA_FILE: path.join(dir, 'ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'temporal.corp',
    }).temporal);
    assert.equal(Buffer.from(tls!.clientCertPair!.crt).toString(), 'CERT PEM');
    assert.equal(Buffer.from(tls!.clientCertPair!.key).toString(), 'KEY PEM');
    assert.equal(Buffer.from(tls!.serverRootCACertificate!).toString(), 'CA PEM');
    assert.equal(tls!.serverNameOverride, 'temporal.corp');
  });

  it('fails naming the file when a configured one is missing', () => {
    const config = loadConfig({ TEMPORAL_TLS_CA_FILE: path.join(dir, 'missing.pem') }).temporal;
    assert.throws(() => tlsOptions(config), /missing\.pem/);
  });
});
