/** The console's templates escape what they are given, and forms follow the input schema. */
import assert from 'node:assert/strict';
import { editedInputs, fieldsHtml, fieldTexts, formFields } from '../../src/http/console/form-fields';
import { href, html, raw, toText } from '../../src/http/console/html';
import { runBody, runsBody, startedThrough } from '../../src/http/console/run-views';
import { withoutActionsBeyond } from '../../src/http/console/layout';
import { refusalExplained } from '../../src/http/console/guard';
import { secretProperties, shownInputs, startedFiles } from '../../src/console/runs';
import type { RunView } from '../../src/runs/run-service';
import { liveInvocation } from '../../src/http/console/agent-views';
import { peopleBody } from '../../src/http/console/people-views';
import { agentFormOf, readAgentCreate, readAgentUpdate } from '../../src/console/agent-form';
import { agentFormBody } from '../../src/http/console/agent-form-views';
import type { AgentRecord } from '../../src/registry/agent-records';

describe('console templates', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const hostile = `"><script>alert('x')</script>\``;
    const out = toText(html`<p title="${hostile}">${hostile}</p>${raw('<br>')}${[hostile, 1, null, undefined, false]}`);
    assert.ok(!out.includes('<script>'));
    assert.equal(out, '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#96;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#96;</p><br>'
      + '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#96;1');
    assert.equal(href('javascript:alert(1)'), '#');
    assert.equal(href('//evil.example/x'), '#');
    assert.equal(href('/files/a?b=1'), '/files/a?b=1');
    assert.equal(href('https://flowgate.example/files/a'), 'https://flowgate.example/files/a');
  });

  it('renders the People page: members with their role selected, the provider\'s rules, and signed-in clients with a revoke form, escaped', () => {
    const out = toText(peopleBody({
      csrf: 'tok',
      members: [{ id: 'mem_1', orgId: 'org_1', email: 'ann@example.com', name: '<i>Ann</i>', role: 'approver', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }],
      provider: {
        name: 'Corp', issuer: 'https://idp.example', clientId: 'cid', roleRules: [{ group: 'ops', role: 'operator' }, { emailDomain: 'example.com', role: 'viewer' }],
        groupsClaim: 'groups', defaultRole: null, redirectUri: 'https://fg.example/console/oidc/callback', signInUrl: 'https://fg.example/console/oidc/start?org=org_1',
        createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
      },
      grants: [{
        id: 'grt_1', clientId: 'https://client.example/meta.json', clientName: null, resource: 'https://fg.example/tools/mcp', scope: 'tools:read', subject: 'member:mem_1',
        member: { id: 'mem_1', email: 'ann@example.com', role: 'approver' }, createdAt: '2026-01-02T00:00:00.000Z', expiresAt: '2026-02-01T00:00:00.000Z',
      }],
    }));
    assert.ok(out.includes('&lt;i&gt;Ann&lt;/i&gt;'));
    assert.match(out, /<select id="role-mem_1" name="role">.*<option value="approver" selected>approver<\/option>/s);
    assert.match(out, /group <code>ops<\/code> → operator/);
    assert.match(out, /e-mail domain <code>example\.com<\/code> → viewer/);
    assert.match(out, /otherwise refused/);
    assert.match(out, /<form method="post" action="\/console\/people\/grants\/grt_1\/revoke"/);
    assert.match(out, /<code>https:\/\/client\.example\/meta\.json<\/code>/);
    assert.match(out, /<code>https:\/\/fg\.example\/tools\/mcp<\/code> <span class="meta">\(read only\)<\/span>/);
    assert.equal((out.match(/name="csrf" value="tok"/g) ?? []).length, 6, 'add, change, issue a token, revoke tokens, remove, revoke');
    assert.doesNotMatch(toText(peopleBody({ csrf: 't', members: [] })), /MCP clients signed in/, 'no section without OAuth sign-in');
  });

  it('renders runs with their names escaped', () => {
    const out = toText(runsBody({
      filter: {}, workflows: [{ id: 'wf_1', name: '<b>x</b>' }], triggers: [], liveIds: ['r1'],
      runs: [{ runId: 'r1', automationId: 'wf_1', automationVersion: 1, status: 'RUNNING', started: '2026-01-01T00:00:00.000Z', closed: null }],
    }));
    assert.ok(out.includes('&lt;b&gt;x&lt;/b&gt;'));
    assert.ok(out.includes('data-runs-live="/console/runs/live?ids=r1"'));
  });

  it('renders an agent invocation with the model\'s text, tool arguments and results escaped, and a reload link while it runs', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const out = toText(liveInvocation({
      view: { invocationId: 'inv_1', agentId: 'agt_1', chatId: 'chat_1', status: 'RUNNING' }, message: hostile,
      toolCalls: [{ turn: 0, name: hostile, arguments: hostile }, { turn: 0, name: 'crm_find', arguments: '{}', result: hostile, ok: false }],
    }, '/console/agents/agt_1?chat=chat_1&inv=inv_1'));
    assert.ok(!out.includes('<img'), out);
    assert.equal(out.split('&lt;img src=x onerror=alert(1)&gt;').length - 1, 4);
    assert.match(out, /class="tool-call pending"[\s\S]*running…[\s\S]*class="tool-call failed"/);
    assert.match(out, /href="\/console\/agents\/agt_1\?chat=chat_1&amp;inv=inv_1">reload the page</);
    const done = toText(liveInvocation({
      view: { invocationId: 'inv_1', agentId: 'agt_1', chatId: 'chat_1', status: 'COMPLETE', response: hostile, turns: 1, toolCalls: [] }, toolCalls: [],
    }, '/x'));
    assert.match(done, /class="text answer">&lt;img/);
    assert.doesNotMatch(done, /reload the page/);
  });

  it('generates a labelled field per property, by type, and a file input unless the schema forbids attachments', () => {
    const schema = {
      type: 'object', additionalProperties: false, required: ['name'],
      properties: {
        name: { type: 'string', title: 'Name', description: 'who you are' }, age: { type: 'integer' }, ratio: { type: 'number' }, ok: { type: 'boolean' },
        size: { enum: ['S', 'M'] }, day: { type: 'string', format: 'date' }, notes: { type: 'string', maxLength: 5000 }, tags: { type: 'array' },
      },
    };
    const { fields, files } = formFields(schema);
    assert.deepEqual(fields.map((f) => [f.name, f.kind, f.required]), [
      ['name', 'text', true], ['age', 'integer', false], ['ratio', 'number', false], ['ok', 'checkbox', false], ['size', 'select', false],
      ['day', 'date', false], ['notes', 'textarea', false], ['tags', 'json', false],
    ]);
    assert.equal(files, false, 'additionalProperties false and no attachments property');
    assert.equal(formFields({ ...schema, properties: { ...schema.properties, attachments: { type: 'array' } } }).files, true);
    assert.equal(formFields(undefined).files, true);
    const out = toText(fieldsHtml(fields, false, { name: '"x' }));
    assert.ok(out.includes('<label for="f0">Name <span aria-hidden="true">*</span></label>'));
    assert.ok(out.includes('aria-describedby="f0-hint"'));
    assert.ok(out.includes('value="&quot;x"'));
  });

  it('pre-fills a schedule\'s edit from its inputs without the secret, and reads the edit back: a blank secret kept, an unticked stored box false, unknown inputs kept', () => {
    const { fields } = formFields({ type: 'object', properties: {
      topic: { type: 'string' }, count: { type: 'integer' }, urgent: { type: 'boolean' }, apiToken: { type: 'string', writeOnly: true }, tags: { type: 'array' },
    } });
    const stored = { topic: 'Q3', count: 3, urgent: true, apiToken: 'sk-stored', tags: ['a'], legacy: 1 };
    assert.deepEqual(fieldTexts(stored, fields), { topic: 'Q3', count: '3', urgent: 'true', tags: '[\n  "a"\n]' });
    assert.deepEqual(editedInputs({ topic: 'Q4', count: '', apiToken: '', tags: '[]' }, fields, stored), { topic: 'Q4', urgent: false, apiToken: 'sk-stored', tags: [], legacy: 1 });
    assert.deepEqual(editedInputs({ topic: 'Q4', count: '7', urgent: 'true', apiToken: 'sk-new' }, fields, { topic: 'Q3' }), { topic: 'Q4', count: 7, urgent: true, apiToken: 'sk-new' });
    assert.deepEqual(editedInputs({ topic: '' }, fields, {}), {}, 'nothing stored, nothing given: no box is made false');
    const out = toText(fieldsHtml(fields, false, { count: 'x' }, { count: 'must be <integer>' }));
    assert.ok(out.includes('name="count" value="x" aria-describedby="f1-error" aria-invalid="true"><p class="error" id="f1-error">must be &lt;integer&gt;</p>'), out);
    assert.ok(out.includes('<div class="field invalid"><label for="f1">'));
  });

  it('masks the inputs the input schema marks secret (writeOnly, format password) and lists the files a run was started with', () => {
    const schema = { type: 'object', properties: { topic: { type: 'string' }, apiToken: { type: 'string', writeOnly: true }, pin: { type: 'string', format: 'password' } } };
    assert.deepEqual([...secretProperties(schema)].sort(), ['apiToken', 'pin']);
    const shown = shownInputs({ topic: 'Q3 <b>', apiToken: 'sk-secret', pin: '1234', count: 3, attachments: [] }, schema);
    assert.deepEqual(shown, [
      { name: 'topic', secret: false, text: 'Q3 <b>' }, { name: 'apiToken', secret: true }, { name: 'pin', secret: true }, { name: 'count', secret: false, text: '3' },
    ]);
    const files = startedFiles({ attachments: [
      { filename: 'brief.pdf', contentType: 'application/pdf', size: 10, url: 'https://fg.example/files/' + encodeURIComponent('attachments/org_1/u/brief.pdf') + '?exp=1' },
      { filename: 'other.txt', contentType: 'text/plain', size: 2, url: 'https://elsewhere.example/x' },
    ] }, 'org_1');
    assert.equal(files[0]?.filename, 'brief.pdf');
    assert.equal(files[0]?.key, 'attachments/org_1/u/brief.pdf');
    assert.equal(files[1]?.key, undefined);
  });

  it('renders a cancelled run as CANCELLED, without "Resume from the failed step", and a viewer\'s run page without actions', () => {
    const view: RunView = {
      runId: 'run-1', status: 'FAILED', reasonCode: 'CANCELLED', error: 'the run was cancelled', final: true, steps: { 1: { name: 'wait', status: 'FAILED', type: 'approval' } }, outcomes: [],
      memo: { orgId: 'org_1', automationId: 'wf', automationVersion: 1, automationName: 'WF', triggerId: 'trg', startedBy: 'form:frm_1', started: '2026-01-01T00:00:00.000Z', stepMap: { 1: 1 }, steps: [{ name: 'wait', type: 'approval' }] },
    };
    const story = { inputs: [{ name: 'apiToken', secret: true }], files: [{ filename: 'a.txt', contentType: 'text/plain', size: 1, url: '/files/x' }], children: [], stepInputs: {} };
    const admin = toText(runBody({ view, csrf: 't', files: [], lastEventId: 0, story, role: 'admin' }));
    assert.match(admin, /status-CANCELLED[^>]*>CANCELLED</);
    assert.ok(!admin.includes('Resume from the failed step'));
    assert.match(admin, />Re-run</);
    assert.match(admin, /a hosted form/);
    assert.match(admin, /•••••• \(secret\)/);
    assert.match(admin, /download="a.txt"/);
    const viewer = toText(runBody({ view: { ...view, reasonCode: undefined }, csrf: 't', files: [], lastEventId: 0, story, role: 'viewer' }));
    assert.ok(!viewer.includes('method="post"'));
    assert.equal(startedThrough({ ...view.memo, startedBy: 'tool:workflows/x' }), 'the MCP workflow tool workflows/x');
  });

  it('leaves out of a page the actions its role lacks, and explains a refusal', () => {
    const page = '<form method="post" data-needs="workflows.write" action="/a"><button>Publish</button></form><a class="button" data-needs="workflows.write" href="/e">Edit</a><form method="post" action="/console/sign-out"></form>';
    assert.equal(withoutActionsBeyond('viewer', page), '<form method="post" action="/console/sign-out"></form>');
    assert.equal(withoutActionsBeyond('editor', page), page);
    assert.match(refusalExplained('editor', 'the editor role lacks the permission runs.operate'), /needs the permission runs\.operate, which the admin, operator roles hold/);
  });

  it('reads the agent form into the API\'s bodies, and says beside each field what is wrong', () => {
    const empty = readAgentCreate({ name: ' ', instructions: '', temperature: 'warm', maxTurns: '0', workflows: 'trg_1 as bad name!' });
    assert.ok(!empty.ok);
    if (!empty.ok) {
      assert.equal(empty.errors.name, 'Give the agent a name.');
      assert.match(empty.errors.instructions ?? '', /instructions/);
      assert.ok(empty.errors.temperature, 'a temperature that is no number');
      assert.ok(empty.errors.maxTurns, 'model calls below 1');
      assert.match(empty.errors.workflows ?? '', /^line 1: must match/);
      const page = toText(agentFormBody({ csrf: 'c', values: { name: ' ', temperature: 'warm' }, errors: empty.errors }));
      assert.match(page, /id="agent-temperature" name="temperature" value="warm" aria-describedby="agent-temperature-error" aria-invalid="true"/);
      assert.match(page, /fields need<\/?[^>]*>? a change|fields need a change/);
    }
    const made = readAgentCreate({ name: 'Helper', instructions: 'Be brief.', servers: 'mail\ncrm: find_customer, add_note', workflows: 'trg_9 as file_report', priority: '2', outputSchema: '{"type":"object"}' });
    assert.ok(made.ok);
    if (made.ok) {
      assert.deepEqual(made.input.servers, [{ name: 'mail', allTools: true }, { name: 'crm', tools: { find_customer: {}, add_note: {} } }]);
      assert.deepEqual(made.input.workflows, [{ triggerId: 'trg_9', toolName: 'file_report' }]);
      assert.deepEqual([made.input.priority, made.input.outputSchema], [2, { type: 'object' }]);
    }
    // the edit page is pre-filled with the agent, and saving it unchanged changes nothing
    const agent: AgentRecord = {
      id: 'agt_1', orgId: 'o', name: 'Helper', description: 'd', instructions: 'Be brief.', outputSchema: null, priority: null,
      servers: [{ name: 'crm', tools: { find_customer: {} } }], workflows: [{ triggerId: 'trg_9' }], model: { model: 'gpt-x', temperature: 0.2 },
      limits: { maxTurns: 4, maxToolCalls: 8, timeoutSeconds: 60, toolResultChars: 2000, maxTokens: 5000 }, createdAt: '', updatedAt: '',
    };
    const again = readAgentUpdate(agentFormOf(agent));
    assert.ok(again.ok);
    if (again.ok) {
      assert.deepEqual(again.input.servers, agent.servers);
      assert.deepEqual(again.input.model, agent.model);
      // only the limits the form shows: the API merges them into the stored ones (toolResultChars and maxTokens kept)
      assert.deepEqual(again.input.limits, { maxTurns: 4, maxToolCalls: 8, timeoutSeconds: 60 });
    }
    const emptied = readAgentUpdate({ ...agentFormOf(agent), maxToolCalls: ' ' });
    assert.ok(emptied.ok);
    if (emptied.ok) assert.deepEqual(emptied.input.limits, { maxTurns: 4, timeoutSeconds: 60 }, 'a limit left empty is left out (kept)');
  });
});
