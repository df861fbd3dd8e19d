/**
 * Run histories as a test reads them. Temporal holds run data sealed (src/crypto/payload-codec.ts):
 * a history fetched from Temporal is opened here with the instance's own codec, so that a test reads
 * inputs, results and labels in clear and replays it on a bare bundle, as it did before the codec.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { EncryptionCodec } from '../../src/crypto/payload-codec';

type History = temporal.api.history.v1.IHistory;

function isPayload(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null && 'metadata' in value && 'data' in value;
}

/** Replaces every sealed payload anywhere in `node` by its clear form, in place. */
export async function openPayloads(node: unknown, codec: PayloadCodec): Promise<void> {
  if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return;
  const holder = node as Record<string, unknown>;
  for (const key of Object.keys(holder)) {
    const value = holder[key];
    if (isPayload(value) && EncryptionCodec.isSealed(value)) {
      const [opened] = await codec.decode([value]);
      holder[key] = opened;
    } else {
      await openPayloads(value, codec);
    }
  }
}

/** A run's history from Temporal with its payloads opened: what Temporal held before the codec. */
export async function clearHistory(fg: { client: Client; codec: PayloadCodec }, run: string | WorkflowHandle): Promise<History> {
  const handle = typeof run === 'string' ? fg.client.workflow.getHandle(run) : run;
  const history = await handle.fetchHistory();
  await openPayloads(history, fg.codec);
  return history;
}

/**
 * The key ring of the saved sealed history (test/workflows/histories/run-automation-sealed.json): a
 * test fixture, known to everyone, never a key of a real instance.
 */
export const FIXTURE_DATA_KEYS = 'fixture-1:Zmxvd2dhdGUgdGVzdCBmaXh0dXJlIGRhdGEga2V5ISE=';
