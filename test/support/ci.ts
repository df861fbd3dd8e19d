/**
 * How the suite treats a missing peer (Node 22, Dovecot, a second loopback address): under
 * `CI=true` a test whose peer is missing FAILS, so the suite cannot go green by skipping; on a
 * developer's machine it skips loudly. The suite's own switches are read here, once, through zod.
 */
import { z } from 'zod';

const TestEnvSchema = z.object({
  CI: z.string().optional().transform((v) => v === 'true'),
  /** where the replay test writes a freshly recorded history (opt-in; the suite never writes into the clone) */
  FLOWGATE_RECORD_HISTORY: z.string().min(1).optional(),
  /** where the fast layer's workflow-type tests write one freshly recorded history per type (opt-in, like the above) */
  FLOWGATE_RECORD_HISTORIES_DIR: z.string().min(1).optional(),
});

const testEnv = Object.freeze(TestEnvSchema.parse(process.env));

/** Whether this run is CI (`CI=true`), where a missing peer is a failure, not a skip. */
export function isCi(): boolean {
  return testEnv.CI;
}

/** A file to record a new replay history into, when a developer asks for one. */
export function recordHistoryPath(): string | undefined {
  return testEnv.FLOWGATE_RECORD_HISTORY;
}

/** A folder to record one new history per workflow type into (test/fast/workflow-types.test.ts), when a developer asks. */
export function recordHistoriesDir(): string | undefined {
  return testEnv.FLOWGATE_RECORD_HISTORIES_DIR;
}

/** Thrown for a missing peer under CI; the message names the peer and how to provide it. */
export class MissingPeerError extends Error {
  override readonly name = 'MissingPeerError';
}

/**
 * Call where a peer turned out to be missing: fails the test (or hook) under CI, else prints a
 * loud line and skips it. `ctx` is the mocha context of the test or hook (a `function`, not an arrow).
 */
export function missingPeer(ctx: Mocha.Context, what: string, reason: string): never {
  const message = `${what}: ${reason}`;
  if (testEnv.CI) throw new MissingPeerError(`missing peer under CI=true (a skip would hide it) — ${message}`);
  console.warn(`\n      !!! SKIPPING ${message}\n`);
  ctx.skip();
}
