/**
 * Discovery tools as clients of the contract's original platform call them: `capabilities_discover`
 * with `request` (and optional `types`, `context`), `capability_details` with `items`; answers
 * keep today's fields and name each tool with `name` and `serverName` too.
 */
import assert from 'node:assert/strict';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { diceServerKind } from '../fixtures/kinds/dice';
import { callTool, rpc, runtimeToken } from './support';

interface Discovered {
  task: string;
  tools: { server: string; tool: string; name: string; serverName: string; path: string; confidence: number }[];
}

describe('discovery compatibility', () => {
  let fg: TestFlowgate;
  let token: string;
  before(async () => {
    fg = await startTestFlowgate({}, { serverKinds: [diceServerKind] });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  it('takes request, types and context in capabilities_discover and names each tool with name and serverName', async () => {
    const answer = await callTool(fg, 'mcp', token, 'capabilities_discover', { request: 'roll some dice', types: ['tool'], context: 'for a board game night' });
    assert.equal(answer.body?.error, undefined, answer.text);
    const found = answer.body?.result?.structuredContent as Discovered;
    assert.equal(found.task, 'roll some dice');
    const first = found.tools[0];
    assert.deepEqual(first && { server: first.server, tool: first.tool, name: first.name, serverName: first.serverName, path: first.path },
      { server: 'dice', tool: 'dice_roll', name: 'dice_roll', serverName: 'dice', path: '/dice' });
    const withTask = (await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'roll some dice' })).body?.result?.structuredContent as Discovered;
    assert.equal(withTask.tools[0]?.name, 'dice_roll', 'task still works');
  });

  it('refuses capabilities_discover without task or request, naming the argument', async () => {
    const answer = await callTool(fg, 'mcp', token, 'capabilities_discover', { types: ['tool'] });
    assert.equal(answer.body?.error?.code, -32000, answer.text);
    assert.match(answer.body?.error?.message ?? '', /task \(or request\) is required/);
  });

  it('takes items in capability_details and adds serverName', async () => {
    const answer = await callTool(fg, 'mcp', token, 'capability_details', { items: ['dice/dice_roll', 'nope/none'] });
    const details = answer.body?.result?.structuredContent as { tools: { server: string; serverName: string; name: string; inputSchema: unknown }[]; unknown: string[] };
    assert.deepEqual(details.tools.map((t) => [t.server, t.serverName, t.name]), [['dice', 'dice', 'dice_roll']]);
    assert.ok(details.tools[0]?.inputSchema);
    assert.deepEqual(details.unknown, ['nope/none']);
    const neither = await callTool(fg, 'mcp', token, 'capability_details', {});
    assert.match(neither.body?.error?.message ?? '', /tools \(or items\) is required/);
  });

  it('lists the new argument names in the tools/list schemas', async () => {
    const listed = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = listed.body?.result?.tools as { name: string; inputSchema: { properties: Record<string, unknown>; required?: string[] } }[];
    const discover = tools.find((t) => t.name === 'capabilities_discover');
    assert.deepEqual(Object.keys(discover?.inputSchema.properties ?? {}).sort(), ['context', 'limit', 'request', 'task', 'types']);
    assert.deepEqual(discover?.inputSchema.required ?? [], []);
    const details = tools.find((t) => t.name === 'capability_details');
    assert.deepEqual(Object.keys(details?.inputSchema.properties ?? {}).sort(), ['items', 'tools']);
  });
});
