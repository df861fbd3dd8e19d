/**
 * Narrowing for values TypeScript cannot know the type of (thrown values, parsed JSON, library
 * answers typed `any`): checked here once instead of cast at each use. Sandbox-safe.
 */

/** A JSON object (or any non-null object that is not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field of an object as it is (undefined when `value` is no object). */
export function fieldOf(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const field: unknown = Reflect.get(value, name);
  return field;
}

/** The `code` of a thrown value (Node's errno errors: `ENOENT`, …), when it has one. */
export function errorCode(err: unknown): unknown {
  return fieldOf(err, 'code');
}

/** What a thrown value says: an Error's message, anything else as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Any non-null object, arrays included (an array's indexes read as string keys). */
export function isObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** An own field of an object (undefined when it has none by that name: nothing inherited). */
export function ownField(value: object, key: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
  const field: unknown = Reflect.get(value, key);
  return field;
}

/**
 * JSON flowgate wrote itself (registry columns, blobs it stored) read back as the type it was
 * written as. It is not validated again on purpose: a stricter schema of today must not make
 * records written by an older version unreadable. The one place that trusts such JSON.
 */
export function ownJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Whether `value` is one of `list`'s members (a `readonly` tuple of literals): narrows it to their union. */
export function isOneOf<T>(list: readonly T[], value: unknown): value is T {
  return list.some((member) => member === value);
}

/** The keys of a record typed as its own keys (Object.keys says `string[]` because objects may hold more). */
export function keysOf<K extends string>(record: Readonly<Record<K, unknown>>): K[] {
  return Object.keys(record).filter((key): key is K => Object.hasOwn(record, key));
}

/** A thrown value as an Error (one that is not is wrapped, its text as the message). */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
