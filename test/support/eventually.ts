/**
 * Waiting for something to happen without a fixed sleep: poll a condition until it holds or a
 * deadline passes (which fails the test with what was awaited and the last error seen).
 */

/** Polls `check` until it answers a value (not undefined) or the deadline passes, which fails the test. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms${lastError ? `; last error: ${String(lastError)}` : ''}`);
}
