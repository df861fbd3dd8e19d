/**
 * Task-based discovery: ranks tools against a task described in words, over tool names, argument
 * names, descriptions and the server's name and description. Plain lexical scoring with an
 * inverse document frequency and a few synonyms: deterministic, explainable, no model needed.
 */
import type { ToolEntry, ToolServer } from '../../server';

/** A server with the tools it listed for the caller. */
export interface ListedServer {
  server: Pick<ToolServer, 'name' | 'description' | 'application'>;
  tools: readonly ToolEntry[];
}

const STOPWORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'do', 'for', 'from', 'i', 'in', 'into', 'is', 'it', 'its', 'me', 'my', 'of',
  'on', 'or', 'our', 'please', 'some', 'that', 'the', 'their', 'them', 'this', 'to', 'us', 'want', 'we', 'what', 'with', 'you', 'your',
  'need', 'can', 'should', 'would', 'will', 'tool', 'tools', 'using', 'use',
]);

/** Words people use for the same thing; each side maps to a shared stem. */
const SYNONYMS: Record<string, string[]> = {
  mail: ['email', 'inbox', 'smtp', 'imap', 'mailbox'],
  message: ['msg', 'letter'],
  search: ['find', 'lookup', 'look', 'query', 'google', 'research'],
  web: ['internet', 'online', 'website', 'websites', 'page', 'pages'],
  send: ['deliver', 'write', 'compose', 'dispatch'],
  read: ['open', 'fetch', 'get', 'view', 'retrieve'],
  list: ['enumerate', 'show', 'browse', 'all'],
  server: ['servers', 'catalog'],
  attachment: ['file', 'files', 'attach'],
};

const CANONICAL = new Map<string, string>();
for (const [canonical, words] of Object.entries(SYNONYMS)) {
  for (const word of words) CANONICAL.set(word, canonical);
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('es') && /(ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Words of a text, camelCase, snake_case and kebab-case split, stop words out, stems in. */
export function tokenize(text: string): string[] {
  const words = text
    .replace(/\be-mail/gi, 'email')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
  return words.map((w) => CANONICAL.get(w) ?? CANONICAL.get(stem(w)) ?? stem(w));
}

export interface RankedTool {
  server: ListedServer['server'];
  tool: ToolEntry;
  /** 0..1: the share of the task's (weighted) words the tool matches, weighted by where they match */
  confidence: number;
}

const WEIGHT = { name: 3, argument: 2, description: 1, server: 1 } as const;
const WEIGHTED_FIELDS = Object.keys(WEIGHT).filter((f): f is keyof typeof WEIGHT => Object.prototype.hasOwnProperty.call(WEIGHT, f));

interface Document {
  server: ListedServer['server'];
  tool: ToolEntry;
  fields: { name: Set<string>; argument: Set<string>; description: Set<string>; server: Set<string> };
}

export function rankTools(task: string, servers: readonly ListedServer[], limit: number): RankedTool[] {
  const docs: Document[] = servers.flatMap(({ server, tools }) => tools.map((tool) => ({
    server,
    tool,
    fields: {
      name: new Set(tokenize(tool.name)),
      argument: new Set(Object.keys(tool.inputSchema.properties).flatMap(tokenize)),
      description: new Set(tokenize(tool.description)),
      server: new Set([...tokenize(server.name), ...tokenize(server.description)]),
    },
  })));
  const query = [...new Set(tokenize(task))];
  if (query.length === 0 || docs.length === 0) return [];
  const idf = new Map(query.map((q) => {
    const df = docs.filter((d) => Object.values(d.fields).some((f) => f.has(q))).length;
    return [q, Math.log(1 + docs.length / (1 + df))] as const;
  }));
  const best = query.reduce((sum, q) => sum + (idf.get(q) ?? 0) * WEIGHT.name, 0);
  return docs
    .map((doc) => {
      let score = 0;
      for (const q of query) {
        const weight = Math.max(0, ...WEIGHTED_FIELDS.filter((f) => doc.fields[f].has(q)).map((f) => WEIGHT[f]));
        score += weight * (idf.get(q) ?? 0);
      }
      return { server: doc.server, tool: doc.tool, confidence: best > 0 ? Math.round((score / best) * 100) / 100 : 0 };
    })
    .filter((r) => r.confidence > 0)
    .sort((a, b) => b.confidence - a.confidence || a.server.name.localeCompare(b.server.name) || a.tool.name.localeCompare(b.tool.name))
    .slice(0, limit);
}
