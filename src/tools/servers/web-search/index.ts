/**
 * The `web-search` server: tool `search`, an adapter to a SearXNG-compatible JSON search API
 * (`GET <url>?q=…&format=json`). The URL is the operator's (FLOWGATE_SEARCH_URL), not a caller's,
 * so it may point at a search instance on the private network; the answer is validated before use.
 */
import { z } from 'zod';
import { OutboundTimeoutError, httpRequest } from '../../../net/http-client';
import { defineTool, toolServer } from '../../define-tool';
import { ToolFailure, type ToolServer } from '../../server';

export const WEB_SEARCH_SERVER_NAME = 'web-search';
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
const UPSTREAM_TIMEOUT_MS = 15_000;

const SearxResultSchema = z.object({
  url: z.string(),
  title: z.string().default(''),
  content: z.string().nullish(),
  engine: z.string().nullish(),
  publishedDate: z.string().nullish(),
}).loose();

const SearxResponseSchema = z.object({
  query: z.string().optional(),
  results: z.array(SearxResultSchema),
  answers: z.array(z.unknown()).optional(),
  suggestions: z.array(z.string()).optional(),
}).loose();

export interface WebSearchOptions {
  /** the search endpoint, e.g. http://127.0.0.1:8888/search */
  url: string;
}

export function webSearchServer(options: WebSearchOptions): ToolServer {
  const search = defineTool({
    name: 'search',
    description: 'Search the web for a query and return the best matching pages (title, url, snippet).',
    timeoutMs: UPSTREAM_TIMEOUT_MS + 5_000,
    input: z.object({
      query: z.string().min(1).max(1000).describe('what to search for'),
      limit: z.number().int().min(1).max(50).default(10).describe('how many results at most (default 10)'),
    }).strict(),
    async handler({ query, limit }, context) {
      const url = new URL(options.url);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      let response;
      try {
        response = await httpRequest({
          method: 'GET', url: url.toString(), headers: { accept: 'application/json' }, timeoutMs: UPSTREAM_TIMEOUT_MS,
          maxResponseBytes: MAX_RESPONSE_BYTES, allowPrivateNetwork: true, signal: context.signal,
        });
      } catch (error) {
        if (error instanceof OutboundTimeoutError) throw new ToolFailure(`the search service did not answer within ${UPSTREAM_TIMEOUT_MS} ms`);
        throw new ToolFailure(`the search service is unreachable: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (response.status < 200 || response.status >= 300) throw new ToolFailure(`the search service answered HTTP ${response.status}`);
      let parsed;
      try {
        parsed = SearxResponseSchema.safeParse(JSON.parse(response.body.toString('utf8')));
      } catch {
        throw new ToolFailure('the search service answered something that is not JSON');
      }
      if (!parsed.success) throw new ToolFailure('the search service answered JSON of an unexpected shape');
      return {
        query,
        results: parsed.data.results.slice(0, limit).map((r) => ({
          title: r.title, url: r.url, snippet: r.content ?? '', ...(r.engine ? { engine: r.engine } : {}),
          ...(r.publishedDate ? { publishedDate: r.publishedDate } : {}),
        })),
        ...(parsed.data.suggestions?.length ? { suggestions: parsed.data.suggestions } : {}),
      };
    },
  });
  return toolServer({
    name: WEB_SEARCH_SERVER_NAME,
    description: 'Search the web: titles, links and snippets of matching pages.',
    tools: [search],
  });
}
