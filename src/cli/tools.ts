/** The tool gateway: `tools list [server]`, `tools call server/tool --arg k=v`, with a runtime token from an API key. */
import type { Command } from 'commander';
import { JsonRpcFailureSchema, JsonRpcSuccessSchema } from '../contracts/mcp';
import { contextOf, type CliContext } from './context';
import { CliError, EXIT } from './errors';
import { collect, isRecord, parsePairs, readDocument } from './inputs';
import { printJson, show } from './output';

const TOOLS_PATH = '/tools';

async function rpc(c: CliContext, server: string, method: string, params: unknown, timeoutMs = 120_000): Promise<Record<string, unknown>> {
  if (!c.apiKey) throw new CliError('no API key: pass --api-key or set FLOWGATE_API_KEY', EXIT.USAGE);
  const token = (await c.client.request<{ token: string }>('POST', '/auth/token', { auth: 'none', headers: { 'X-API-KEY': c.apiKey } })).body.token;
  const reply = await c.client.request<unknown>('POST', `${TOOLS_PATH}/${server.split('/').map(encodeURIComponent).join('/')}`, {
    auth: 'none', timeoutMs, headers: { Authorization: `Bearer ${token}` }, body: { jsonrpc: '2.0', id: 1, method, params },
  });
  const failed = JsonRpcFailureSchema.safeParse(reply.body);
  if (failed.success) throw new CliError(`${method}: ${failed.data.error.message} (${failed.data.error.code})`);
  const answer = JsonRpcSuccessSchema.safeParse(reply.body);
  if (!answer.success) throw new CliError('the tool gateway answered something that is not JSON-RPC');
  return answer.data.result;
}

export function toolCommands(program: Command): void {
  const tools = program.command('tools').description('the tool gateway (needs an API key)');
  tools.command('list [server]').description('the tools of a server, or the servers when none is named').action(async (server: string | undefined, _o, cmd: Command) => {
    const c = contextOf(cmd);
    if (!server) {
      const result = await rpc(c, 'mcp', 'tools/call', { name: 'listServers', arguments: {} });
      const value = result.structuredContent;
      const servers = isRecord(value) && Array.isArray(value.servers) ? value.servers.filter(isRecord) : [];
      show(c.json, value ?? result, servers, ['name', 'description']);
      return;
    }
    const result = await rpc(c, server, 'tools/list', {});
    const list = Array.isArray(result.tools) ? result.tools.filter(isRecord) : [];
    show(c.json, result, list.map((t) => ({ name: t.name, description: String(t.description ?? '').split('\n')[0]?.slice(0, 80) })), ['name', 'description']);
  });
  tools.command('call <serverTool>').description('call server/tool').option('-a, --arg <key=value>', 'an argument (repeatable)', collect, [])
    .option('-f, --file <file>', 'arguments from a JSON or YAML file')
    .action(async (serverTool: string, o: { arg: string[]; file?: string }, cmd: Command) => {
      const c = contextOf(cmd);
      const at = serverTool.lastIndexOf('/');
      if (at <= 0) throw new CliError('name the tool as server/tool', EXIT.USAGE);
      const doc = o.file ? readDocument(o.file) : {};
      if (!isRecord(doc)) throw new CliError(`${String(o.file)} must hold an object`, EXIT.USAGE);
      const result = await rpc(c, serverTool.slice(0, at), 'tools/call', { name: serverTool.slice(at + 1), arguments: { ...doc, ...parsePairs(o.arg) } });
      if (c.json) printJson(result);
      else printJson(result.structuredContent ?? result.content ?? result);
      if (result.isError === true) process.exitCode = EXIT.FAILURE;
    });
}
