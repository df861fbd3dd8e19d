/**
 * The console's tool servers (docs/console.md "Tool servers"): the organization's servers, a
 * server's tools, and a tool's page whose form (generated from the tool's input schema) calls it
 * through the tool dispatcher the MCP gateway and workflow steps use, as the organization; the
 * result, or the error, is shown on the page. Recorded as `tool.called` (never the arguments). A
 * server or tool the organization does not have is a 404 page.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { TOOL_CALLED } from '../../audit/actions';
import { ToolCallError, type ToolEntry, type ToolServer } from '../../tools';
import { consoleState, parseConsoleForm, refusePage } from '../console/guard';
import { page, send } from '../console/layout';
import { noteForAudit } from '../console/audit';
import type { ConsoleKit } from '../console/kit';
import { formFields, typedValues, type FormField } from '../console/form-fields';
import { serverBody, serversBody, toolBody, type TryOutcome } from '../console/server-views';
import { formOf } from '../validate';
import { anyDurable } from '../../common/durable-tools';
import { roleHas } from '../../people/roles';
import { durableCallRows, durableCallsSection } from '../console/durable-call-views';
import type { Html } from '../console/html';

/** a try from the console waits no longer than this (the tool's own limit may be shorter) */
const TRY_TIMEOUT_MS = 60_000;

/** how many of the latest `durable_call.*` records a server page reads for its recent calls */
const RECENT_DURABLE_RECORDS = 500;

const STATUS_OF: Record<string, number> = { UNKNOWN_TOOL: 404, INVALID_ARGUMENTS: 400, CONNECTION_REFUSED: 400, TIMEOUT: 504, UNAVAILABLE: 502 };

export function addServerRoutes(router: Router, kit: ConsoleKit): void {
  const { deps, session, csrf, audited } = kit;

  /** The organization's server named in the path, or a 404 page. */
  const ownServer = async (ctx: Context): Promise<ToolServer | undefined> => {
    try {
      return await deps.tools.server(consoleState(ctx).session.orgId, String(ctx.params.name ?? ''));
    } catch (error) {
      if (!(error instanceof ToolCallError) || error.code !== 'UNKNOWN_SERVER') throw error;
      refusePage(ctx, 404, 'No such tool server', 'This organization has no tool server with that name.');
      return undefined;
    }
  };
  const toolsOf = async (ctx: Context, server: ToolServer): Promise<readonly ToolEntry[] | undefined> => {
    try {
      return await deps.tools.listOf(server, consoleState(ctx).session.orgId);
    } catch (error) {
      refusePage(ctx, 502, 'Tools not listed', `The server did not list its tools: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
  /** The server and its tool, or a 404 page. */
  const ownTool = async (ctx: Context): Promise<{ server: ToolServer; tool: ToolEntry; fields: FormField[] } | undefined> => {
    const server = await ownServer(ctx);
    const tools = server && await toolsOf(ctx, server);
    if (!server || !tools) return undefined;
    const tool = tools.find((t) => t.name === ctx.params.tool);
    if (!tool) {
      refusePage(ctx, 404, 'No such tool', `${server.name} has no tool with that name.`);
      return undefined;
    }
    const { fields } = formFields(tool.inputSchema);
    if (server.application) {
      // an application server's PCID: one of the organization's connections of that application
      const pcids = (await deps.tools.connections.list(consoleState(ctx).session.orgId, server.application)).map((c) => c.PCID);
      for (const f of fields) if (f.name === 'PCID' && pcids.length > 0) Object.assign(f, { kind: 'select', options: pcids });
    }
    return { server, tool, fields };
  };
  const toolPage = (ctx: Context, status: number, found: { server: ToolServer; tool: ToolEntry; fields: FormField[] }, extra: { values?: Record<string, string>; outcome?: TryOutcome } = {}): void => {
    const { session: s } = consoleState(ctx);
    send(ctx, status, page({ title: found.tool.name, csrf: s.csrfToken, section: 'servers' }, toolBody({ ...found, csrf: s.csrfToken, ...extra })));
  };

  /** A custom server with durable tools: its recent durable calls from the audit trail, for a role that may read it. */
  const durableCallsOf = async (ctx: Context, server: ToolServer): Promise<Html | ''> => {
    if (server.embedded || !anyDurable(server.durable, server.durableTools)) return '';
    const { session: s } = consoleState(ctx);
    if (!roleHas(s.role, 'audit.read')) return durableCallsSection(undefined);
    const { records } = await deps.audit.list(s.orgId, { action: 'durable_call.' }, RECENT_DURABLE_RECORDS);
    return durableCallsSection(durableCallRows(records, server.name));
  };

  router.get('/servers', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    send(ctx, 200, page({ title: 'Tool servers', csrf: s.csrfToken, section: 'servers' }, serversBody(await deps.tools.servers(s.orgId))));
  });
  router.get('/servers/:name', session, async (ctx) => {
    const server = await ownServer(ctx);
    const tools = server && await toolsOf(ctx, server);
    if (!server || !tools) return;
    send(ctx, 200, page({ title: server.name, csrf: consoleState(ctx).session.csrfToken, section: 'servers' }, serverBody(server, tools, await durableCallsOf(ctx, server))));
  });
  router.get('/servers/:name/tools/:tool', session, async (ctx) => {
    const found = await ownTool(ctx);
    if (found) toolPage(ctx, 200, found);
  });
  router.post('/servers/:name/tools/:tool', session, audited(TOOL_CALLED, 'tool', undefined, 'tool'), parseConsoleForm, csrf, async (ctx) => {
    const found = await ownTool(ctx);
    if (!found) return;
    const form = formOf(ctx);
    const values = Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'csrf'));
    noteForAudit(ctx, { tool: `${found.server.name}/${found.tool.name}`, server: found.server.name });
    const started = performance.now();
    try {
      const result = await deps.tools.call(consoleState(ctx).session.orgId, found.server, found.tool.name, typedValues(form, found.fields), { timeoutMs: TRY_TIMEOUT_MS });
      noteForAudit(ctx, { durationMs: Math.round(performance.now() - started), ...(result.isError ? { isError: true } : {}) });
      toolPage(ctx, 200, found, { values, outcome: result.isError ? { ok: false, message: result.message, value: result.value } : { ok: true, value: result.value } });
    } catch (error) {
      if (!(error instanceof ToolCallError)) throw error;
      noteForAudit(ctx, { durationMs: Math.round(performance.now() - started), errorCode: error.code });
      toolPage(ctx, STATUS_OF[error.code] ?? 400, found, { values, outcome: { ok: false, code: error.code, message: error.message } });
    }
  });
}
