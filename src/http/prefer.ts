/**
 * The `Prefer` request header (RFC 7240): `Prefer: wait=N` asks for a synchronous answer within N
 * seconds. Preferences are advice: malformed or unknown ones are ignored, never an error.
 */

/** Preferences by lowercased name, each with its value (`true` when it has none). First one wins. */
export function parsePrefer(header: string): Map<string, string | true> {
  const preferences = new Map<string, string | true>();
  for (const item of header.split(',')) {
    const [first = ''] = item.split(';');
    const match = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s"]*)))?\s*$/.exec(first);
    if (!match) continue;
    const name = (match[1] ?? '').toLowerCase();
    if (preferences.has(name)) continue;
    const value = match[2] ?? match[3];
    preferences.set(name, value === undefined || value === '' ? true : value);
  }
  return preferences;
}

/** The `wait` preference in whole seconds, or undefined when absent or not a non-negative integer. */
export function preferredWaitSeconds(header: string): number | undefined {
  const value = parsePrefer(header).get('wait');
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}
