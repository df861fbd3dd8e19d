/**
 * The data converter of every Temporal client and worker flowgate makes: the run-data codec
 * (payload-codec.ts) on every payload, and the failure converter that makes failures' messages and
 * stack traces payloads too (src/common/failure-converter.ts), so that they are sealed as well.
 */
import path from 'node:path';
import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { DataDecryptionError, type EncryptionCodec } from './payload-codec';

/** The compiled failure converter module, which the SDK loads by path (in the workflow bundle too). */
export const FAILURE_CONVERTER_PATH = path.join(__dirname, '..', 'common', 'failure-converter.js');

export function runDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** What a process whose key ring cannot open a run's payloads is told: the key, the run, what to do. */
export class WrongDataKeyError extends Error {
  constructor(readonly keyId: string, detail: { runId?: string; missing: boolean; ring: string; taskQueue: string; role: 'worker' | 'process' }) {
    const run = detail.runId === undefined ? 'a run' : `run ${detail.runId}`;
    const why = detail.missing ? `data key "${keyId}", which this ${detail.role} does not have (${detail.ring})`
      : `data key "${keyId}", and this ${detail.role}'s key of that ID does not open it (another key under the same ID)`;
    super(`${run} of task queue "${detail.taskQueue}" is sealed with ${why}: every gateway and worker needs the same `
      + 'FLOWGATE_DATA_KEYS (docs/operations.md, "Run data encryption")');
    this.name = 'WrongDataKeyError';
  }
}

/**
 * A worker's codec: the run-data codec, watched. A payload sealed under a data key the ring lacks,
 * or that its key of that ID does not open, means this worker cannot run what it is handed: it
 * would fail that run's workflow tasks for as long as it polls. `onWrongKey` is told (once), and
 * the worker stops polling (src/app/start.ts), so that a correctly keyed worker takes the tasks; the
 * decoding itself still fails, as before.
 */
export class WatchedCodec implements PayloadCodec {
  #told = false;

  constructor(private readonly codec: EncryptionCodec, private readonly onWrongKey: (keyId: string, missing: boolean, runId: string | undefined) => void) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return this.codec.encode(payloads);
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    try {
      return await this.codec.decode(payloads);
    } catch (err) {
      if (err instanceof DataDecryptionError && err.keyId !== undefined && !this.#told) {
        this.#told = true;
        this.onWrongKey(err.keyId, err.missing, context?.workflowId);
      }
      throw err;
    }
  }
}
