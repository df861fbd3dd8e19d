/** The role and permission table (src/people/roles.ts): what each role holds; and what each management route needs (its operation, src/http/operations.ts). */
import assert from 'node:assert/strict';
import { OPERATIONS, actionTable, permissionFor, permissionOfAction } from '../../src/http/operations';
import { PERMISSIONS, ROLES, permissionsOf, roleHas } from '../../src/people/roles';
import { mappedRole, issuerProblem } from '../../src/people/identity-providers';

describe('roles and permissions', () => {
  it('gives admin everything, viewer only reading, and each other role its own share', () => {
    assert.deepEqual(permissionsOf('admin'), Object.keys(PERMISSIONS));
    assert.deepEqual(permissionsOf('viewer'), ['read']);
    assert.deepEqual(permissionsOf('editor'), ['read', 'workflows.write', 'triggers.write', 'connections.write', 'servers.write', 'agents.write']);
    assert.deepEqual(permissionsOf('operator'), ['read', 'runs.operate']);
    assert.deepEqual(permissionsOf('approver'), ['read', 'approvals.decide']);
    for (const role of ROLES) assert.equal(roleHas(role, 'members.manage'), role === 'admin');
  });

  it('maps every audited management action to a permission by its family, and routes to theirs', () => {
    for (const [route, spec] of actionTable(OPERATIONS)) {
      assert.ok(permissionOfAction(spec.action), `${route} (${spec.action}) has no permission`);
    }
    assert.equal(permissionFor('POST', '/api/v1/workflows/:id/publish'), 'workflows.write');
    assert.equal(permissionFor('POST', '/api/v1/runs/:runId/cancel'), 'runs.operate');
    assert.equal(permissionFor('POST', '/api/v1/runs/:runId/approval'), 'approvals.decide');
    assert.equal(permissionFor('PUT', '/api/v1/triggers/:id/schedule'), 'triggers.write');
    assert.equal(permissionFor('POST', '/api/v1/agents/:id/invoke'), 'runs.operate');
    assert.equal(permissionFor('GET', '/api/v1/workflows'), 'read');
    assert.equal(permissionFor('HEAD', '/api/v1/workflows/'), 'read');
    assert.equal(permissionFor('GET', '/api/v1/api-keys'), 'api_keys.manage');
    assert.equal(permissionFor('GET', '/api/v1/audit'), 'audit.read');
    assert.equal(permissionFor('GET', '/api/v1/runs/:runId/approvals'), 'approvals.links', 'a link decides as its approver: admins only');
    assert.equal(permissionFor('POST', '/api/v1/something-new'), 'org.manage', 'an unlisted change is for admins only');
  });

  it('maps claims to a role by the first matching rule', () => {
    const rules = [{ group: 'builders', role: 'editor' }, { emailDomain: 'corp.example', role: 'viewer' }] as const;
    assert.equal(mappedRole([...rules], 'a@corp.example', ['builders']), 'editor');
    assert.equal(mappedRole([...rules], 'a@CORP.example', []), 'viewer');
    assert.equal(mappedRole([...rules], 'a@other.example', ['ops']), undefined);
    assert.equal(mappedRole([...rules], 'a@sub.corp.example', []), undefined, 'a domain is matched whole');
  });

  it('accepts an https issuer, and http only on loopback', () => {
    assert.equal(issuerProblem('https://id.example.com'), undefined);
    assert.equal(issuerProblem('http://127.0.0.1:4000'), undefined);
    assert.match(issuerProblem('http://id.example.com') ?? '', /https/);
    assert.match(issuerProblem('not a url') ?? '', /URL/);
  });
});
