import assert from 'node:assert/strict';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { diceServerKind } from '../fixtures/kinds/dice';
import { callTool, rpc, RPC_HEADERS, runtimeToken } from './support';

describe('an extra server kind registered in one module', () => {
  let fg: TestFlowgate;
  let token: string;
  before(async () => {
    fg = await startTestFlowgate({}, { serverKinds: [diceServerKind] });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  it('is listed and called through /tools/<path> with its zod-declared schema', async () => {
    const listed = await rpc(fg, 'dice', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = listed.body?.result?.tools as { name: string; inputSchema: { required: string[]; properties: Record<string, unknown> } }[];
    assert.deepEqual(tools.map((t) => t.name), ['dice_roll']);
    assert.deepEqual(tools[0]?.inputSchema.required, ['count']);
    assert.deepEqual(Object.keys(tools[0]?.inputSchema.properties ?? {}), ['count', 'face']);
    const rolled = await callTool(fg, 'dice', token, 'dice_roll', { count: 3 });
    assert.deepEqual(rolled.body?.result?.structuredContent, { count: 3, face: 6, total: 18, orgId: DEFAULT_ORG_ID, tenant: null });
    const refused = await callTool(fg, 'dice', token, 'dice_roll', { count: 11 });
    assert.equal(refused.body?.error?.code, -32000);
    assert.match(refused.body?.error?.message ?? '', /arguments\.count/);
  });

  it('hands the X-Pf-Forward- headers of the request to the server, and nothing else', async () => {
    const answer = await rpc(fg, 'dice', token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'dice_roll', arguments: { count: 1, face: 2 } } },
      { ...RPC_HEADERS, 'X-Pf-Forward-X-Tenant': 'blue', 'X-Tenant': 'not forwarded' });
    assert.equal((answer.body?.result?.structuredContent as { tenant: string }).tenant, 'blue');
  });

  it('shows in listServers, capabilities_discover and capability_details', async () => {
    const servers = await callTool(fg, 'mcp', token, 'listServers');
    const dice = (servers.body?.result?.structuredContent as { servers: { name: string; tools: string[]; embedded: boolean }[] }).servers.find((s) => s.name === 'dice');
    assert.deepEqual(dice, { name: 'dice', path: '/dice', description: 'Dice for board games: roll loaded dice that always show the same face.', embedded: true, tools: ['dice_roll'] });
    const found = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'roll some dice for a board game' });
    assert.equal((found.body?.result?.structuredContent as { tools: { tool: string }[] }).tools[0]?.tool, 'dice_roll');
    const details = await callTool(fg, 'mcp', token, 'capability_details', { tools: ['dice/dice_roll'] });
    assert.equal((details.body?.result?.structuredContent as { tools: { name: string }[] }).tools[0]?.name, 'dice_roll');
  });

  it('runs from a workflow tool step', async () => {
    const p = await publishWorkflow(fg, {
      name: 'roll',
      steps: [{ name: 'Roll', type: 'tool', server: 'dice', tool: 'dice_roll', arguments: { count: '{{inputs.n}}', face: 4 } }],
    });
    const response = await trigger(fg, p, { n: 2 }, { 'x-api-wait': 'true' });
    const body = (await response.json()) as { status: string; results: { result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    assert.equal((JSON.parse(body.results[0]?.result.result ?? '{}') as { total: number }).total, 8);
  });
});
