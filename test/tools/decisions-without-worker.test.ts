/**
 * MCP approval answers while the run's worker is stopped (issue 46): a `tasks/update` answer and an
 * elicitation response are answered within 5 s (the empty acknowledgement, 202), the decisions are
 * recorded and applied once the worker is back, and a decision for an approver the step does not
 * name is refused at once (-32003 not_an_approver) whatever the worker does. The audit trail says
 * which decisions were recorded rather than applied.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually';
import { publishWorkflow, type TestFlowgate } from '../support/flowgate';
import { rpc, runtimeToken, startToolFlowgate } from './support';

const V2026 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const ANSWER_WITHIN_MS = 5000;

/** A 2026-era request as the SDK's transport sends it: the envelope in `_meta` and the standard headers. */
function modernRequest(method: string, params: Record<string, unknown>, name: string): { body: Record<string, unknown>; headers: Record<string, string> } {
  return {
    body: {
      jsonrpc: '2.0', id: randomUUID(), method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } },
    },
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': V2026, 'Mcp-Method': method, 'Mcp-Name': name },
  };
}

describe('MCP approval answers while no worker answers', () => {
  let fg: TestFlowgate;
  let token: string;
  let otherToken: string;

  before(async () => {
    fg = await startToolFlowgate();
    ({ token } = await runtimeToken(fg));
    ({ token: otherToken } = await runtimeToken(fg));
  });
  after(async () => {
    await fg?.startWorker();
    await fg?.stop();
  });

  async function send(request: ReturnType<typeof modernRequest>): Promise<{ status: number; ms: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string } } }> {
    const began = Date.now();
    const response = await fetch(`${fg.url}/tools/workflows`, { method: 'POST', headers: { ...request.headers, Authorization: `Bearer ${token}` }, body: JSON.stringify(request.body) });
    const body = await response.json() as never;
    return { status: response.status, ms: Date.now() - began, body };
  }

  it('acknowledges tasks/update and elicitation answers within 5 s, refuses an approver the step does not name, and applies the others once the worker is back', async () => {
    const name = `pay_${randomUUID().slice(0, 8)}`;
    await publishWorkflow(fg, {
      name: `pay-${randomUUID()}`,
      steps: [
        { name: 'Ask', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], required: 2, message: 'Pay invoice {{inputs.invoice}}?' },
        { name: 'Paid', type: 'template', template: 'paid {{inputs.invoice}}' },
      ],
    }, { tool: { name, description: 'pays an invoice' } });
    const created = await send(modernRequest('tools/call', { name, arguments: { invoice: 'INV-1' } }, name));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const taskId = String(created.body.result?.taskId);
    await eventually(async () => {
      const { body } = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${taskId}`);
      return body.status === 'PAUSED' ? true : undefined;
    }, 'the run waiting on its approval');

    await fg.stopWorker();
    try {
      const update = (content: Record<string, unknown>) => send(modernRequest('tasks/update', { taskId, inputResponses: { 'approval-1': { action: 'accept', content } } }, taskId));
      const refused = await update({ decision: 'approve', approver: 'mallory@example.com' });
      assert.equal(refused.body.error?.code, -32003, JSON.stringify(refused.body));
      assert.match(refused.body.error?.message ?? '', /not_an_approver/);
      assert.ok(refused.ms < ANSWER_WITHIN_MS, `answered in ${refused.ms} ms`);

      const accepted = await update({ decision: 'approve', approver: 'ann@example.com' });
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      assert.equal(accepted.body.error, undefined, JSON.stringify(accepted.body));
      assert.ok(accepted.ms < ANSWER_WITHIN_MS, `answered in ${accepted.ms} ms`);

      const began = Date.now();
      // another key's decision (one API key counts as one approval)
      const elicited = await rpc(fg, 'workflows', otherToken, { jsonrpc: '2.0', id: `flowgate-approval/${taskId}/1/${randomUUID()}`, result: { action: 'accept', content: { decision: 'approve', approver: 'bob@example.com' } } });
      assert.equal(elicited.status, 202);
      assert.ok(Date.now() - began < ANSWER_WITHIN_MS, `answered in ${Date.now() - began} ms`);
    } finally {
      await fg.startWorker();
    }
    const done = await eventually(async () => {
      const { body } = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${taskId}`);
      return body.status === 'COMPLETE' ? body : undefined;
    }, 'the run completing with both recorded decisions', 60_000);
    assert.equal(done.status, 'COMPLETE');

    const audit = await fg.admin<{ records: { action: string; outcome: string; target: { id: string }; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?limit=50');
    const mine = audit.body.records.filter((r) => r.action === 'approval.decided' && r.target.id === taskId).reverse();
    assert.deepEqual(mine.map((r) => [r.outcome, r.details.approver, r.details.applied, r.details.refusal]), [
      ['refused', 'mallory@example.com', undefined, 'NOT_AN_APPROVER'],
      ['success', 'ann@example.com', false, undefined],
      ['success', 'bob@example.com', false, undefined],
    ], 'recorded, not applied, while the run did not answer');
    const approvals = await fg.admin<{ decisionOutcomes: { decisionId: string; status: string; approver: string }[] }>('GET', `/api/v1/runs/${taskId}/approvals`);
    assert.deepEqual(approvals.body.decisionOutcomes.map((o) => [o.approver, o.status]), [['ann@example.com', 'applied'], ['bob@example.com', 'applied']]);
    assert.deepEqual(approvals.body.decisionOutcomes.map((o) => o.decisionId), mine.slice(1).map((r) => r.details.decisionId));
  });
});
