/** Human tables on stdout by default, JSON with `--json`; progress goes to stderr, only on a TTY. */

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const cells = rows.map((row) => columns.map((c) => cell(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  process.stdout.write(`${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`);
}

/** Either JSON or a table, as the global `--json` flag says. */
export function show(json: boolean, value: unknown, rows: Record<string, unknown>[], columns: string[]): void {
  if (json) printJson(value);
  else printTable(rows, columns);
}

export function showObject(json: boolean, value: Record<string, unknown>): void {
  if (json) {
    printJson(value);
    return;
  }
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  for (const [key, v] of Object.entries(value)) process.stdout.write(`${key.padEnd(width)}  ${cell(v)}\n`);
}

/** A one-line progress indicator on stderr, redrawn in place; silent when stderr is not a terminal. */
export class Progress {
  private shown = false;
  update(message: string): void {
    if (!process.stderr.isTTY) return;
    process.stderr.write(`\r\x1b[2K${message}`);
    this.shown = true;
  }
  done(): void {
    if (this.shown) process.stderr.write('\r\x1b[2K');
    this.shown = false;
  }
}

/** Human lines that are not data (e.g. step transitions) go to stdout without --json, to stderr with it. */
export function note(json: boolean, line: string): void {
  (json ? process.stderr : process.stdout).write(`${line}\n`);
}
