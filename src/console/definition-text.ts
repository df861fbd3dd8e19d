/**
 * A workflow definition as the console's editor holds it: JSON text. Names the place of each
 * validation problem (docs/console.md "Workflows"): a problem's path as written in JSON
 * (`steps[2].url`) and the line of the text it is on, or of its nearest ancestor that is there
 * (a missing field is named on the line of the object it is missing from).
 */

export type JsonPath = readonly (string | number)[];

/** `steps[2].url`; the whole definition is `(definition)`. */
export function pathText(path: JsonPath): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(part)) text += text ? `.${part}` : part;
    else text += `[${JSON.stringify(part)}]`;
  }
  return text || '(definition)';
}

/** The JSON text parsed, or the syntax error with the line it is on. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; message: string; line: number } {
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // (some messages name no position: then the text's own first error is found)
    const position = /position (\d+)/.exec(message)?.[1];
    const line = lineAt(text, position === undefined ? syntaxErrorOffset(text) : Number(position));
    return { ok: false, message: message.replace(/^JSON\.parse: /, ''), line };
  }
}

/** Where a strict JSON reading of the text first fails (the text's length when it fails at its end). */
function syntaxErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw new RangeError(String(i));
  };
  const space = (): void => {
    while (i < text.length && /[ \t\r\n]/.test(text.charAt(i))) i++;
  };
  const expect = (c: string): void => {
    space();
    if (text.charAt(i) !== c) fail();
    i++;
  };
  const string = (): void => {
    expect('"');
    while (i < text.length && text.charAt(i) !== '"') {
      if (text.charCodeAt(i) < 32) fail();
      i += text.charAt(i) === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const value = (): void => {
    space();
    const c = text.charAt(i);
    if (c === '{' || c === '[') {
      const object = c === '{';
      i++;
      space();
      if (text.charAt(i) === (object ? '}' : ']')) {
        i++;
        return;
      }
      for (;;) {
        if (object) {
          string();
          expect(':');
        }
        value();
        space();
        if (text.charAt(i) === ',') {
          i++;
          continue;
        }
        expect(object ? '}' : ']');
        return;
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i));
    if (!literal) fail();
    i += literal?.[0].length ?? 0;
  };
  try {
    value();
    space();
    if (i < text.length) fail();
    return text.length;
  } catch {
    return Math.min(i, text.length);
  }
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < Math.min(offset, text.length); i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The line each path of a valid JSON text starts on (an object member's: its key's line). */
export function locatePaths(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let i = 0;
  let line = 1;
  const space = (): void => {
    while (i < text.length && /\s/.test(text.charAt(i))) {
      if (text.charAt(i) === '\n') line++;
      i++;
    }
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text.charAt(i) !== '"') i += text.charAt(i) === '\\' ? 2 : 1;
    i++;
    const parsed: unknown = JSON.parse(text.slice(start, i));
    return String(parsed);
  };
  const value = (path: (string | number)[], at: number): void => {
    space();
    lines.set(pathText(path), at);
    const c = text.charAt(i);
    if (c === '{' || c === '[') {
      const object = c === '{';
      i++;
      space();
      if (text.charAt(i) === (object ? '}' : ']')) {
        i++;
        return;
      }
      for (let index = 0; i < text.length; index++) {
        space();
        const memberLine = line;
        let key: string | number = index;
        if (object) {
          key = string();
          space();
          i++; // :
        }
        value([...path, key], object ? memberLine : (space(), line));
        space();
        const next = text.charAt(i++);
        if (next !== ',') return;
      }
      return;
    }
    if (c === '"') {
      string();
      return;
    }
    while (i < text.length && !/[\s,\]}]/.test(text.charAt(i))) i++;
  };
  try {
    space();
    value([], line);
  } catch { /* only called on valid JSON; a surprise leaves the lines found so far */ }
  return lines;
}

/** The line of `path` in the text, or of its nearest ancestor found there. */
export function lineOf(lines: ReadonlyMap<string, number>, path: JsonPath): number {
  for (let n = path.length; n >= 0; n--) {
    const line = lines.get(pathText(path.slice(0, n)));
    if (line !== undefined) return line;
  }
  return 1;
}
