/**
 * Rooms with one job: a source file over 300 lines says in its header comment why it is one piece
 * (the words "One piece"), so a file that grows past that size is split or explained, not left to grow.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root (this file runs from dist/test/app/). */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const LIMIT = 300;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative] : [];
  });
}

/** The first block comment of a file, if the file opens with one (imports may not come before it). */
function header(text: string): string {
  const match = /^\s*\/\*\*?([\s\S]*?)\*\//.exec(text);
  return match?.[1] ?? '';
}

describe('source files over 300 lines', function () {
  it('say in their header why they are one piece', () => {
    const unexplained = ['src', 'workflows', 'activities', 'temporal'].flatMap(sourceFiles).filter((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      return lines > LIMIT && !/One piece/.test(header(text));
    });
    assert.deepEqual(unexplained, [], `split these files, or say in their header why each is one piece:\n${unexplained.join('\n')}`);
  });

  it('finds a long file without the explanation', () => {
    const text = `/** A header that explains nothing. */\n${'const x = 1;\n'.repeat(LIMIT + 1)}`;
    assert.equal(/One piece/.test(header(text)), false);
    assert.equal(/One piece/.test(header(`/**\n * One piece: because.\n */\n`)), true);
  });
});
