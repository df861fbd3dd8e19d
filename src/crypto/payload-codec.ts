/**
 * Run data encrypted before it reaches Temporal: a Temporal PayloadCodec that seals every payload
 * the client and the workers send (workflow inputs and results, activity inputs and results,
 * signals, updates, queries, memos, failures' details, user metadata) with AES-256-GCM under the
 * newest key of a key ring, and opens payloads sealed under any key of the ring. The whole original
 * payload (its metadata and data) is serialized as a Temporal Payload protobuf inside, so decoding
 * gives back exactly what was encoded. Payloads in clear (runs started before the codec) pass through
 * decoding unchanged, so those runs keep working. Search attributes never pass through a codec.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DATA_KEY_BYTES, type DataKey } from '../config/key-text';

/** The encoding of a sealed payload (the name Temporal's encryption samples use). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata field naming the key a payload was sealed with. */
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = temporal.api.common.v1.Payload;

export { DATA_KEY_BYTES, type DataKey };

/**
 * A payload that does not open. `keyId` names the data key it was sealed with when that is what
 * failed: the ring has no key of that ID (`missing`), or its key of that ID is another key.
 */
export class DataDecryptionError extends Error {
  constructor(message: string, readonly keyId?: string, readonly missing = false) {
    super(message);
    this.name = 'DataDecryptionError';
  }
}

export interface DataCodecOptions {
  /** newest first: the first one seals */
  keys: readonly DataKey[];
  /** false: payloads are sent in clear, sealed ones are still opened (FLOWGATE_DATA_ENCRYPTION=off) */
  encrypt: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The keys live in ECMAScript private fields: the SDK logs a worker's options, codec included, at
 * debug level, and JSON.stringify does not see `#` fields (a plain property showed the key's bytes).
 */
export class EncryptionCodec implements PayloadCodec {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #current?: DataKey;
  readonly #encodingBytes = encoder.encode(ENCRYPTED_ENCODING);

  constructor(options: DataCodecOptions) {
    const keys = new Map<string, Buffer>();
    for (const { id, key } of options.keys) {
      if (key.length !== DATA_KEY_BYTES) throw new Error(`data key "${id}" is not ${DATA_KEY_BYTES} bytes`);
      if (keys.has(id)) throw new Error(`data key id "${id}" appears twice`);
      keys.set(id, key);
    }
    this.#keys = keys;
    if (options.encrypt) {
      if (!options.keys[0]) throw new Error('data encryption is on but no data key is given');
      this.#current = options.keys[0];
    }
  }

  /** The id of the key new payloads are sealed with; undefined: they are sent in clear. */
  get currentKeyId(): string | undefined {
    return this.#current?.id;
  }

  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  /** The ring's key IDs for a message: `it has "a", "b"` (never the keys). */
  ringText(): string {
    const known = this.keyIds;
    return known.length === 0 ? 'it has none' : `it has ${known.map((k) => `"${k}"`).join(', ')}`;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const current = this.#current;
    if (!current) return payloads;
    return payloads.map((payload) => this.#seal(payload, current));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#open(payload));
  }

  /** Whether a payload is sealed by a codec of this kind (whatever its key). */
  static isSealed(payload: Payload): boolean {
    const encoding = payload.metadata?.encoding;
    return encoding !== undefined && decoder.decode(encoding) === ENCRYPTED_ENCODING;
  }

  #seal(payload: Payload, key: DataKey): Payload {
    const plain = ProtoPayload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.key, iv);
    // the key id is bound in: a payload relabelled with another id does not open
    cipher.setAAD(Buffer.from(key.id, 'utf8'));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return {
      metadata: { encoding: this.#encodingBytes, [KEY_ID_METADATA]: encoder.encode(key.id) },
      data: Buffer.concat([iv, body, cipher.getAuthTag()]),
    };
  }

  #open(payload: Payload): Payload {
    if (!EncryptionCodec.isSealed(payload)) return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    const id = idBytes === undefined ? undefined : decoder.decode(idBytes);
    if (id === undefined) throw new DataDecryptionError('an encrypted payload names no key (no encryption-key-id)');
    const key = this.#keys.get(id);
    if (!key) {
      throw new DataDecryptionError(`a payload is encrypted with data key "${id}", which this process does not have `
        + `(${this.ringText()}): add that key to FLOWGATE_DATA_KEYS after the newest one`, id, true);
    }
    const raw = Buffer.from(payload.data ?? new Uint8Array());
    if (raw.length < IV_BYTES + TAG_BYTES) throw new DataDecryptionError(`an encrypted payload (key "${id}") is too short to be one`);
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(id, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new DataDecryptionError(`an encrypted payload does not open with data key "${id}" (altered, or another key under the same id)`, id);
    }
    const decoded = ProtoPayload.decode(plain);
    return { metadata: { ...decoded.metadata }, data: decoded.data };
  }
}
