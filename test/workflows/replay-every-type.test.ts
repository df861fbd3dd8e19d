/**
 * Every workflow type the worker registers has a saved history in test/workflows/histories/, and
 * all of them replay on today's bundle (Worker.runReplayHistories), so a change that breaks
 * determinism for an open run of any type fails the suite. A new workflow type needs a saved
 * history (test/fast/workflow-types.test.ts records one with FLOWGATE_RECORD_HISTORIES_DIR).
 *
 * They replay as a worker runs them: with the run-data codec (src/crypto/payload-codec.ts). The
 * histories recorded before the codec hold payloads (and failures' messages) in clear, which it
 * passes through; those in histories/sealed/ were recorded with the codec on
 * (test/temporal/run-data-encryption.test.ts; test/temporal/sealed-failures.test.ts, a failed run
 * whose failure's message is sealed too) and open with the fixture key ring.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { WORKFLOW_TYPES } from '../../src/common/workflow-contracts';
import { parseDataKeys } from '../../src/config/key-text';
import { EncryptionCodec } from '../../src/crypto/payload-codec';
import { FIXTURE_DATA_KEYS } from '../support/histories';
import { workflowBundle } from '../../temporal/worker';

/** The source tree (this file runs from dist/test/workflows/). */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const HISTORIES_DIR = path.join(ROOT, 'test', 'workflows', 'histories');
/** Recorded with the codec on, under FIXTURE_DATA_KEYS. */
const SEALED_DIR = path.join(HISTORIES_DIR, 'sealed');

function fixtureConverter(): DataConverter {
  const keys = parseDataKeys(FIXTURE_DATA_KEYS);
  if (typeof keys === 'string') throw new Error(keys);
  return { payloadCodecs: [new EncryptionCodec({ keys, encrypt: true })] };
}
/** Replays only on a worker that traces (bundle.test.ts replays it with the tracing bundle). */
const TRACED_ONLY = new Set(['run-automation-traced-otel1.json']);

/** The workflow functions workflows/index.ts exports (each one a workflow type of the worker). */
async function exportedWorkflowTypes(): Promise<string[]> {
  const source = await readFile(path.join(ROOT, 'workflows', 'index.ts'), 'utf8');
  const names = [...source.matchAll(/export\s*\{([^}]*)\}/g)].flatMap((m) => (m[1] ?? '').split(','))
    .map((part) => part.trim().split(/\s+as\s+/).pop()?.trim() ?? '').filter((name) => /^\w+$/.test(name));
  return [...new Set(names)].sort();
}

async function savedHistories() {
  const clear = (await readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json') && !TRACED_ONLY.has(f)).map((f) => path.join(HISTORIES_DIR, f));
  const sealed = (await readdir(SEALED_DIR)).filter((f) => f.endsWith('.json')).map((f) => path.join(SEALED_DIR, f));
  const files = [...clear, ...sealed].sort();
  return Promise.all(files.map(async (file) => {
    const history = historyFromJSON(JSON.parse(await readFile(file, 'utf8')));
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    return { file, type: started?.workflowType?.name ?? '', workflowId: started?.workflowId || path.basename(file, '.json'), history };
  }));
}

describe('saved histories of every workflow type', () => {
  it('workflows/index.ts exports exactly the workflow types of the contracts', async () => {
    assert.deepEqual(await exportedWorkflowTypes(), Object.values(WORKFLOW_TYPES).sort());
  });

  it('holds at least one saved history of each workflow type', async () => {
    const saved = new Set((await savedHistories()).map((h) => h.type));
    const missing = (await exportedWorkflowTypes()).filter((type) => !saved.has(type));
    assert.deepEqual(missing, [], `no saved history of ${missing.join(', ')} in ${HISTORIES_DIR}`);
  });

  it('replays every saved history on today\'s workflow bundle, with the run-data codec', async () => {
    const saved = await savedHistories();
    assert.ok(saved.some((h) => h.file.startsWith(SEALED_DIR)), `no sealed history in ${SEALED_DIR}`);
    const byId = new Map(saved.map((h) => [h.workflowId, h.file]));
    assert.equal(byId.size, saved.length, 'two saved histories share a workflow ID');
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), dataConverter: fixtureConverter() }, saved.map(({ workflowId, history }) => ({ workflowId, history })))) {
      replayed++;
      if (result.error) failures.push(`${byId.get(result.workflowId)}: ${result.error.message}`);
    }
    assert.equal(replayed, saved.length);
    assert.deepEqual(failures, [], 'saved histories no longer replay: the workflow code changed in a non-deterministic way');
  });

  it('a sealed history does not replay without the codec (its payloads are ciphertext)', async () => {
    const sealed = (await savedHistories()).filter((h) => h.file.startsWith(SEALED_DIR));
    assert.ok(sealed.length > 0);
    for (const { workflowId, history } of sealed) {
      await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId));
    }
  });
});
