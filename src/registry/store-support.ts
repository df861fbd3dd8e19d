/**
 * What every store of the registry shares: its error type, how a missing org is reported, and how
 * timestamps and JSON columns are written and read (see db.ts for the column conventions).
 */
import { dbErrorCode } from './db';
import { ownJson } from '../common/narrow';

export type RegistryErrorCode = 'NOT_FOUND' | 'NOT_PUBLISHED' | 'INVALID' | 'CONFLICT';

export class RegistryError extends Error {
  readonly code: RegistryErrorCode;

  constructor(code: RegistryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RegistryError';
    this.code = code;
  }
}

/** Codes that mean "another writer got there first": a retry sees their commit and can proceed. */
export const CONFLICT_CODES: ReadonlySet<string> = new Set([
  '23505', // pg unique_violation
  '40001', // pg serialization_failure
  '40P01', // pg deadlock_detected
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_BUSY',
]);

const FOREIGN_KEY_CODES: ReadonlySet<string> = new Set(['23503', 'SQLITE_CONSTRAINT_FOREIGNKEY']);

/** Turns a foreign-key violation on org_id into NOT_FOUND instead of a driver error. */
export async function withOrgCheck<T>(orgId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (FOREIGN_KEY_CODES.has(dbErrorCode(error) ?? '')) {
      throw new RegistryError('NOT_FOUND', `org ${orgId} not found`, { cause: error });
    }
    throw error;
  }
}

/**
 * JSON columns are written only by the registry's stores from already-validated values, so they
 * are read back without re-validation; re-parsing with today's schema could also reject versions
 * published under an older one, and published versions must stay readable.
 */
export const fromJson: <T>(text: string) => T = ownJson;

export function nowIso(): string {
  return new Date().toISOString();
}
