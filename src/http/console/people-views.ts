/**
 * The console's People page (docs/console.md "People"): the organization's members and their
 * roles, its OpenID Connect provider as configured (read-only here: set it through the API), and
 * the MCP clients signed in by URL (their OAuth grants), each with its actions.
 */
import type { MemberRecord, OAuthGrantRecord } from '../../registry';
import type { IdentityProviderView } from '../../people/identity-providers';
import { ROLES } from '../../people/roles';
import { html, type Html } from './html';

export interface PeopleData {
  members: MemberRecord[];
  provider?: IdentityProviderView;
  /** undefined: the gateway serves no OAuth sign-in */
  grants?: OAuthGrantRecord[];
  csrf: string;
  notice?: string;
  error?: string;
}

const hidden = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

function roleSelect(id: string, current?: string): Html {
  return html`<select id="${id}" name="role">${ROLES.map((r) => html`<option value="${r}"${r === current ? html` selected` : ''}>${r}</option>`)}</select>`;
}

function membersTable(members: MemberRecord[], csrf: string): Html {
  if (members.length === 0) return html`<p class="meta">No members yet: the admin token does everything.</p>`;
  return html`<table><caption class="visually-hidden">Members</caption>
<thead><tr><th scope="col">E-mail</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"></th></tr></thead>
<tbody>${members.map((m) => {
    const action = `/console/people/${encodeURIComponent(m.id)}`;
    return html`<tr id="member-${m.id}"><td>${m.email}</td><td>${m.name ?? html`<span class="meta">none</span>`}</td>
<td><form method="post" action="${action}/role" class="inline">${hidden(csrf)}<label class="visually-hidden" for="role-${m.id}">Role of ${m.email}</label>${roleSelect(`role-${m.id}`, m.role)} <button type="submit">Change</button></form></td>
<td>${m.createdAt}</td>
<td><form method="post" action="${action}/tokens" class="inline">${hidden(csrf)}<button type="submit" class="secondary">Issue a personal access token</button></form>
<form method="post" action="${action}/tokens/revoke" class="inline" data-confirm="Revoke every personal access token of ${m.email}? Whoever uses them is refused at once.">${hidden(csrf)}<button type="submit" class="secondary">Revoke their tokens</button></form>
<form method="post" action="${action}/remove" data-confirm="Remove ${m.email}? Their tokens, console sessions and MCP sign-ins end at once.">${hidden(csrf)}<button type="submit" class="danger">Remove</button></form></td></tr>`;
  })}</tbody></table>`;
}

function providerSection(provider: IdentityProviderView | undefined): Html {
  if (!provider) {
    return html`<p class="meta">No identity provider. Set one with <code>PUT /api/v1/identity-provider</code> (docs: people and roles) and people sign in with it here and in MCP clients.</p>`;
  }
  const rules = provider.roleRules.map((rule) => html`<li>${'group' in rule ? html`group <code>${rule.group}</code>` : html`e-mail domain <code>${rule.emailDomain}</code>`} → ${rule.role}</li>`);
  return html`<dl class="facts"><dt>Name</dt><dd>${provider.name}</dd><dt>Issuer</dt><dd><code>${provider.issuer}</code></dd>
<dt>Client ID</dt><dd><code>${provider.clientId}</code></dd><dt>Redirect URI</dt><dd><code>${provider.redirectUri}</code></dd>
<dt>Sign-in link</dt><dd><code>${provider.signInUrl}</code></dd>
<dt>Roles</dt><dd>${rules.length === 0 ? html`<span class="meta">no rules</span>` : html`<ul>${rules}</ul>`} otherwise ${provider.defaultRole ?? 'refused'} (claim <code>${provider.groupsClaim}</code>)</dd></dl>`;
}

function grantsTable(grants: OAuthGrantRecord[], csrf: string): Html {
  if (grants.length === 0) return html`<p class="meta">No MCP client is signed in.</p>`;
  return html`<table><caption class="visually-hidden">MCP clients signed in</caption>
<thead><tr><th scope="col">Client</th><th scope="col">Signed in as</th><th scope="col">Resource</th><th scope="col">Since</th><th scope="col">Good until</th><th scope="col"></th></tr></thead>
<tbody>${grants.map((g) => html`<tr id="grant-${g.id}"><td>${g.clientName ?? html`<code>${g.clientId}</code>`}</td>
<td>${g.member ? html`${g.member.email} <span class="meta">(${g.member.role})</span>` : html`the admin token <span class="meta">${g.subject}</span>`}</td>
<td><code>${g.resource}</code>${g.scope !== null && !g.scope.split(' ').includes('tools:call') ? html` <span class="meta">(read only)</span>` : ''}</td><td>${g.createdAt}</td><td>${g.expiresAt}</td>
<td><form method="post" action="/console/people/grants/${encodeURIComponent(g.id)}/revoke" data-confirm="Sign this client out? Its tokens are refused at once.">${hidden(csrf)}<button type="submit" class="danger">Revoke</button></form></td></tr>`)}</tbody></table>`;
}

export function peopleBody(data: PeopleData): Html {
  const { csrf } = data;
  return html`<h1>People</h1>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<h2>Members</h2>
<form method="post" action="/console/people" class="filters">${hidden(csrf)}
<div><label for="member-email">E-mail</label><input id="member-email" name="email" type="email" maxlength="320" required></div>
<div><label for="member-name">Name</label><input id="member-name" name="name" type="text" maxlength="200"></div>
<div><label for="member-role">Role</label>${roleSelect('member-role', 'viewer')}</div>
<div><button type="submit">Add a member</button></div></form>
<p class="hint">admin: everything; editor: workflows, triggers, connections, servers, agents; operator: runs; approver: the approvals addressed to them; viewer: read.</p>
${membersTable(data.members, csrf)}
<h2>Identity provider</h2>
${providerSection(data.provider)}
${data.grants === undefined ? '' : html`<h2>MCP clients signed in</h2>${grantsTable(data.grants, csrf)}`}`;
}

/** The page that shows a member's new personal access token, once (flowgate keeps only its hash). */
export function tokenIssuedBody(options: { email: string; token: string; tokenId: string }): Html {
  return html`<p><a href="/console/people">← People</a></p>
<h1>A personal access token for ${options.email}</h1>
<div class="notice" role="status"><p>Copy it now: it is shown this once (flowgate keeps only its hash, <code>${options.tokenId}</code>). It signs in to the console and the management API with the member's role.</p>
<p><code id="new-token">${options.token}</code></p></div>`;
}
