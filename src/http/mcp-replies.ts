/**
 * How the tool gateway's HTTP side (src/http/routes/tools.ts) reads an MCP client's Accept header
 * and writes its answers: one JSON reply (or none, 202), or a stream of messages as SSE.
 */
import type { Context } from 'koa';
import type { JsonRpcResponse } from '../contracts/mcp';
import type { TaskResultStream } from '../tools/mcp/task-stream';

export function acceptsEventStream(accept: string): boolean {
  return accept.split(',').some((part) => part.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}

/** The contract's `application/json` and MCP clients' `application/json, text/event-stream` both qualify. */
export function acceptsJson(accept: string): boolean {
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]?.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

/** The Content-Type of every JSON answer, as Koa's `ctx.type = 'application/json'` writes it. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function reply(ctx: Context, status: number, body: JsonRpcResponse | JsonRpcResponse[] | undefined, headers: Record<string, string> = {}): void {
  ctx.set(headers);
  ctx.status = status;
  if (body === undefined) {
    // '' keeps the status (Koa turns a null body into 204) and sends nothing
    ctx.body = '';
    ctx.remove('Content-Type');
    return;
  }
  // what `ctx.type = 'application/json'` sets, without its MIME lookup (mime-types' contentType on every answer)
  ctx.set('Content-Type', JSON_CONTENT_TYPE);
  ctx.body = JSON.stringify(body);
}

/**
 * Writes a stream's messages as SSE, to the socket directly rather than as a Koa stream body: a
 * client that goes away is normal here, not an error to report.
 */
export function streamMessages(ctx: Context, stream: TaskResultStream): void {
  ctx.status = 200;
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
  const open = (): boolean => !res.writableEnded && !res.destroyed;
  void stream({
    send: (message) => {
      if (open()) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    },
    keepAlive: () => {
      if (!res.destroyed) res.write(': keep-alive\n\n');
    },
  }).finally(() => res.end());
}
