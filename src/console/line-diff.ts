/**
 * A line diff (longest common subsequence) of two texts, for the console's version diff
 * (docs/console.md "Workflows"): pretty-printed definitions are compared line by line. Texts too
 * large for the quadratic table are shown as all removed, then all added.
 */

export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
  /** 1-based line in the old text (same, removed) */
  oldLine?: number;
  /** 1-based line in the new text (same, added) */
  newLine?: number;
}

const MAX_CELLS = 4_000_000;

export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  // the common head and tail need no table
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = [];
  for (let k = 0; k < head; k++) out.push({ kind: 'same', text: a[k] ?? '', oldLine: k + 1, newLine: k + 1 });
  const n = midA.length;
  const m = midB.length;
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    midA.forEach((text, k) => out.push({ kind: 'removed', text, oldLine: head + k + 1 }));
    midB.forEach((text, k) => out.push({ kind: 'added', text, newLine: head + k + 1 }));
  } else {
    // table[i][j]: the LCS length of midA[i..] and midB[j..]
    const width = m + 1;
    const table = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * width + j] = midA[i] === midB[j] ? (table[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        out.push({ kind: 'same', text: midA[i] ?? '', oldLine: head + i + 1, newLine: head + j + 1 });
        i++;
        j++;
      } else if (i < n && (j >= m || (table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0))) {
        out.push({ kind: 'removed', text: midA[i] ?? '', oldLine: head + i + 1 });
        i++;
      } else {
        out.push({ kind: 'added', text: midB[j] ?? '', newLine: head + j + 1 });
        j++;
      }
    }
  }
  for (let k = tail; k > 0; k--) {
    out.push({ kind: 'same', text: a[a.length - k] ?? '', oldLine: a.length - k + 1, newLine: b.length - k + 1 });
  }
  return out;
}
