/**
 * Checks the repository's Markdown against the repository: links that must resolve inside it (to a
 * file, and to a heading when they carry a #fragment), no link to anything outside it, and the
 * configuration reference table held to the configuration schema. Pure functions over text and the
 * file system, so test/docs.test.ts can prove each check fails on a broken fixture.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';

/** Fenced code blocks (``` or ~~~) become empty lines, so line numbers stay right. */
export function withoutFencedCode(markdown: string): string {
  let fence: { char: string; length: number } | undefined;
  return markdown.split('\n').map((line) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (opening?.[1] && opening[1][0] === fence.char && opening[1].length >= fence.length && line.trim() === opening[1]) fence = undefined;
      return '';
    }
    if (opening?.[1]) {
      fence = { char: opening[1][0] ?? '`', length: opening[1].length };
      return '';
    }
    return line;
  }).join('\n');
}

/**
 * Inline code spans (a run of N backticks up to the next run of exactly N, across line breaks but
 * not across a blank line) become spaces of the same length; text outside them is kept.
 */
export function withoutCodeSpans(text: string): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    if (text[at] !== '`') {
      out += text[at];
      at += 1;
      continue;
    }
    let run = 0;
    while (text[at + run] === '`') run += 1;
    const closing = new RegExp(`(?<!\`)\`{${run}}(?!\`)`, 'g');
    closing.lastIndex = at + run;
    const end = closing.exec(text);
    if (!end || text.slice(at + run, end.index).includes('\n\n')) {
      // an unmatched backtick run is literal text
      out += '`'.repeat(run);
      at += run;
      continue;
    }
    const spanEnd = end.index + run;
    out += text.slice(at, spanEnd).replace(/[^\n]/g, ' ');
    at = spanEnd;
  }
  return out;
}

/** The prose of a Markdown file: no fenced code, no code spans. */
export function prose(markdown: string): string {
  return withoutCodeSpans(withoutFencedCode(markdown));
}

/** A heading's anchor as GitHub makes it: lowercase, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images keep their text
    .replace(/`/g, '')
    .replace(/\*+/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's ATX headings (`#` to `######`), duplicates suffixed -1, -2… */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFencedCode(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1] ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface FoundLink {
  target: string;
  line: number;
  kind: 'inline' | 'reference' | 'autolink' | 'bare URL' | 'html';
}

/** Every link of a Markdown file outside code: inline links and images, reference definitions, autolinks, bare URLs GitHub would link, HTML href/src. */
export function findLinks(markdown: string): FoundLink[] {
  const text = prose(markdown);
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  const found: FoundLink[] = [];
  const collect = (pattern: RegExp, kind: FoundLink['kind']): void => {
    for (const match of text.matchAll(pattern)) found.push({ target: match[1] ?? '', line: lineOf(match.index ?? 0), kind });
  };
  collect(/\]\(\s*<?([^()\s<>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g, 'inline');
  collect(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm, 'reference');
  collect(/<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+\.[A-Za-z]+)>/g, 'autolink');
  collect(/\b(?:href|src)\s*=\s*["']([^"']*)["']/g, 'html');
  collect(/(?<![\w/(<])((?:https?:\/\/|www\.)[^\s<>)"']+)/g, 'bare URL');
  // a URL already found as a link of another kind is not reported again as a bare URL
  const seen = new Set<string>();
  return found.filter((link) => {
    const key = `${link.line}\u0000${link.target}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * What is wrong with the links of `file` (a path relative to `root`): each link must be relative,
 * resolve to an existing file or folder inside `root`, and a #fragment must name a heading of the
 * Markdown file it points to.
 */
export function linkProblems(root: string, file: string): string[] {
  const absolute = path.join(root, file);
  const markdown = readFileSync(absolute, 'utf8');
  const problems: string[] = [];
  for (const link of findLinks(markdown)) {
    const where = `${file}:${link.line}: ${link.kind} ${JSON.stringify(link.target)}`;
    if (link.kind === 'bare URL' || link.kind === 'autolink' || SCHEME.test(link.target) || link.target.startsWith('//')) {
      problems.push(`${where} points outside the repository`);
      continue;
    }
    const hash = link.target.indexOf('#');
    const pathPart = hash === -1 ? link.target : link.target.slice(0, hash);
    const fragment = hash === -1 ? undefined : link.target.slice(hash + 1);
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathPart);
    } catch {
      problems.push(`${where} is not valid percent-encoding`);
      continue;
    }
    const resolved = decoded === '' ? absolute
      : decoded.startsWith('/') ? path.join(root, decoded) : path.resolve(path.dirname(absolute), decoded);
    const inside = path.relative(root, resolved);
    if (inside.startsWith('..') || path.isAbsolute(inside)) {
      problems.push(`${where} resolves outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where}: no such file ${inside}`);
      continue;
    }
    if (fragment === undefined) continue;
    if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
      problems.push(`${where}: a #fragment only on a Markdown file`);
      continue;
    }
    const anchors = headingAnchors(readFileSync(resolved, 'utf8'));
    if (!anchors.has(decodeURIComponent(fragment))) problems.push(`${where}: ${inside} has no heading #${fragment}`);
  }
  return problems;
}

/** The cells of a table row, split on unescaped pipes. */
function cells(row: string): string[] {
  const trimmed = row.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim());
}

export interface ReferenceRow {
  variable: string;
  defaultCell: string;
  meaning: string;
  line: number;
}

/** The rows of every `| variable | default | meaning |` table in a Markdown file. */
export function referenceRows(markdown: string): ReferenceRow[] {
  const lines = withoutFencedCode(markdown).split('\n');
  const rows: ReferenceRow[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const header = lines[i] ?? '';
    if (!header.trim().startsWith('|') || cells(header).join('|').toLowerCase() !== 'variable|default|meaning') continue;
    for (let j = i + 2; j < lines.length && (lines[j] ?? '').trim().startsWith('|'); j += 1) {
      const [variable = '', defaultCell = '', meaning = '', ...extra] = cells(lines[j] ?? '');
      rows.push({ variable: extra.length > 0 ? `${variable} (more than three cells)` : variable, defaultCell, meaning, line: j + 1 });
    }
  }
  return rows;
}

/** How the reference table shows a schema default: the value itself, `""` for an empty string. */
export function shownDefault(value: unknown): string {
  if (value === '') return '""';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * What is wrong with the reference tables of `markdown` against an environment schema's shape:
 * each variable exactly once, nothing the schema does not accept, a meaning for each, and the
 * default shown as the first code span of the default cell (or "unset…" where the schema has none).
 */
export function configReferenceProblems(shape: Readonly<Record<string, z.ZodType>>, markdown: string): string[] {
  const problems: string[] = [];
  const rows = referenceRows(markdown);
  const documented = new Map<string, number>();
  for (const row of rows) {
    const name = /^`([A-Za-z_][A-Za-z0-9_]*)`$/.exec(row.variable)?.[1];
    if (!name) {
      problems.push(`line ${row.line}: the variable cell must be one name in backticks, found ${JSON.stringify(row.variable)}`);
      continue;
    }
    documented.set(name, (documented.get(name) ?? 0) + 1);
    const schema = shape[name];
    if (!schema) {
      problems.push(`line ${row.line}: ${name} is not a variable of the configuration schema`);
      continue;
    }
    if (row.meaning === '') problems.push(`line ${row.line}: ${name} has no meaning`);
    const parsed = schema.safeParse(undefined);
    const schemaDefault = parsed.success ? parsed.data : undefined;
    if (schemaDefault === undefined) {
      if (!/^unset\b/.test(row.defaultCell)) problems.push(`line ${row.line}: ${name} has no default in the schema, so its default cell must start with "unset", found ${JSON.stringify(row.defaultCell)}`);
      continue;
    }
    const firstCode = /`([^`]*)`/.exec(row.defaultCell)?.[1];
    if (firstCode !== shownDefault(schemaDefault)) {
      problems.push(`line ${row.line}: ${name} defaults to ${shownDefault(schemaDefault)} in the schema, the table shows ${JSON.stringify(row.defaultCell)}`);
    }
  }
  for (const [name, count] of documented) {
    if (count > 1) problems.push(`${name} has ${count} rows`);
  }
  for (const name of Object.keys(shape)) {
    if (!documented.has(name)) problems.push(`${name} is accepted by the configuration schema but has no row`);
  }
  return problems;
}
