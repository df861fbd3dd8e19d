/**
 * The console's connections (docs/console.md "Connections"): list, create, a connection's page,
 * Test, Connect (the OAuth authorization-code consent, through the API's own callback, which comes
 * back here) and Delete. The same stores and checks as /api/v1/connections (routes/connections.ts),
 * the same audit actions; another organization's connection is a 404 page.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { APPLICATIONS, type ConnectionSummary } from '../../tools';
import { consoleState, parseConsoleForm, refusePage } from '../console/guard';
import { page, send } from '../console/layout';
import { noteForAudit } from '../console/audit';
import { apiActionOf, type ConsoleKit } from '../console/kit';
import {
  CONNECTION_ERRORS, CONNECTION_NOTICES, connectionBody, connectionsBody, type ConnectionRow, type TestOutcome,
} from '../console/connection-views';
import { connectionRedirectUri } from '../connection-oauth';
import { formOf } from '../validate';

type Form = Record<string, unknown>;
const text = (form: Form, name: string): string => (typeof form[name] === 'string' ? form[name].trim() : '');

/** The custom connection's credentials from the create form's fields (the schema then judges them). */
function customCredentials(form: Form): Record<string, unknown> {
  const kind = text(form, 'authKind');
  const scopes = text(form, 'scopes').split(/\s+/).filter(Boolean);
  const auth: Record<string, unknown> = { kind };
  if (kind === 'api_key') Object.assign(auth, { in: text(form, 'keyIn') || 'header', name: text(form, 'keyName'), value: text(form, 'keyValue') });
  else if (kind === 'basic') Object.assign(auth, { username: text(form, 'username'), password: typeof form.password === 'string' ? form.password : '' });
  else {
    Object.assign(auth, { tokenUrl: text(form, 'tokenUrl'), clientId: text(form, 'clientId'), clientSecret: text(form, 'clientSecret'), scopes });
    if (kind === 'oauth2_authorization_code') auth.authorizeUrl = text(form, 'authorizeUrl');
  }
  return { baseUrl: text(form, 'baseUrl'), ...(text(form, 'testPath') ? { testPath: text(form, 'testPath') } : {}), auth };
}

function isApplication(name: string): name is keyof typeof APPLICATIONS {
  return Object.prototype.hasOwnProperty.call(APPLICATIONS, name);
}

export function addConnectionRoutes(router: Router, kit: ConsoleKit): void {
  const { deps, session, csrf, audited } = kit;
  const custom = deps.customServers;
  const row = async (orgId: string, c: ConnectionSummary): Promise<ConnectionRow> => ({
    id: c.PCID, application: c.application, name: c.name, createdAt: c.createdAt, ...(custom ? await custom.statusOf(orgId, c) : { status: 'connected' }),
  });

  const listPage = async (ctx: Context, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const connections = await Promise.all((await deps.tools.connections.list(s.orgId)).map((c) => row(s.orgId, c)));
    send(ctx, status, page({ title: 'Connections', csrf: s.csrfToken, section: 'connections' }, connectionsBody({
      connections, applications: Object.keys(APPLICATIONS), csrf: s.csrfToken, ...extra,
    })));
  };

  /** The session's organization's connection, or a 404 page (another organization's looks missing). */
  const own = async (ctx: Context): Promise<ConnectionSummary | undefined> => {
    const found = await deps.tools.connections.get(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!found) refusePage(ctx, 404, 'No such connection', 'This organization has no connection with that ID.');
    return found;
  };

  const connectionPage = async (ctx: Context, found: ConnectionSummary, status: number, extra: { test?: TestOutcome; notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const opened = custom && await custom.openCustom(s.orgId, found.PCID);
    send(ctx, status, page({ title: found.name ?? found.PCID, csrf: s.csrfToken, section: 'connections' }, connectionBody({
      connection: await row(s.orgId, found), csrf: s.csrfToken, ...(opened ? { authKind: opened.credentials.auth.kind } : {}), ...extra,
    })));
  };

  router.get('/connections', session, async (ctx) => {
    const done = typeof ctx.query.done === 'string' ? CONNECTION_NOTICES[ctx.query.done] : undefined;
    await listPage(ctx, 200, done ? { notice: done } : {});
  });

  router.post('/connections', session, audited(apiActionOf('POST', '/api/v1/connections'), 'connection', undefined, 'connection'), parseConsoleForm, csrf, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const form: Form = formOf(ctx);
    const application = text(form, 'application');
    if (!isApplication(application)) return listPage(ctx, 400, { error: `Choose an application: ${Object.keys(APPLICATIONS).join(', ')}.` });
    let credentials: unknown;
    if (application === 'custom') {
      credentials = customCredentials(form);
    } else {
      try {
        credentials = JSON.parse(text(form, 'credentials'));
      } catch {
        return listPage(ctx, 400, { error: 'Credentials: not JSON.' });
      }
    }
    noteForAudit(ctx, { application });
    const checked = APPLICATIONS[application].safeParse(credentials);
    // paths and rules only: the values are secrets
    if (!checked.success) return listPage(ctx, 400, { error: checked.error.issues.map((i) => `credentials.${i.path.join('.')}: ${i.message}`).join('; ') });
    const name = text(form, 'name').slice(0, 200);
    const created = await deps.tools.connections.create(s.orgId, application, name || null, checked.data);
    await custom?.created(s.orgId, created.PCID, checked.data);
    noteForAudit(ctx, { connection: created.PCID });
    ctx.status = 303;
    ctx.redirect(`/console/connections/${encodeURIComponent(created.PCID)}?done=created`);
  });

  router.get('/connections/:id', session, async (ctx) => {
    const found = await own(ctx);
    if (!found) return;
    const notice = typeof ctx.query.done === 'string' ? CONNECTION_NOTICES[ctx.query.done] : undefined;
    const error = typeof ctx.query.error === 'string' ? CONNECTION_ERRORS[ctx.query.error] : undefined;
    await connectionPage(ctx, found, 200, { ...(notice ? { notice } : {}), ...(error ? { error } : {}) });
  });

  router.post('/connections/:id/test', session, audited(apiActionOf('POST', '/api/v1/connections/:id/test'), 'connection', 'id'), parseConsoleForm, csrf, async (ctx) => {
    const found = await own(ctx);
    if (!found) return;
    const opened = custom && await custom.openCustom(consoleState(ctx).session.orgId, found.PCID);
    if (!custom || !opened) return connectionPage(ctx, found, 400, { error: 'Only custom connections have a test endpoint.' });
    const result = await custom.test(opened);
    noteForAudit(ctx, { ok: result.ok });
    await connectionPage(ctx, found, 200, { test: result });
  });

  router.post('/connections/:id/connect', session, audited(apiActionOf('GET', '/api/v1/connections/:id/oauth/authorize'), 'connection', 'id'), parseConsoleForm, csrf, async (ctx) => {
    const found = await own(ctx);
    if (!found) return;
    const { session: s } = consoleState(ctx);
    const opened = custom && await custom.openCustom(s.orgId, found.PCID);
    if (!custom || opened?.credentials.auth.kind !== 'oauth2_authorization_code') {
      return connectionPage(ctx, found, 400, { error: 'This connection does not use the OAuth authorization code flow.' });
    }
    // the API's callback (the redirect URI registered at the provider), which sends the browser back here
    const redirectUri = connectionRedirectUri(deps, ctx);
    const authorizeUrl = await custom.auth.startConsent(opened, redirectUri, `/console/connections/${encodeURIComponent(found.PCID)}`);
    // a page that goes on at once (form-action 'self' would stop a redirect of this POST to the provider)
    send(ctx, 200, page({ title: 'Connecting', csrf: s.csrfToken, section: 'connections', refresh: authorizeUrl },
      connectionBody({ connection: await row(s.orgId, found), csrf: s.csrfToken, authKind: opened.credentials.auth.kind, notice: 'On to the provider for consent…' })));
  });

  router.post('/connections/:id/delete', session, audited(apiActionOf('DELETE', '/api/v1/connections/:id'), 'connection', 'id'), parseConsoleForm, csrf, async (ctx) => {
    const found = await own(ctx);
    if (!found) return;
    const { session: s } = consoleState(ctx);
    const used = await deps.registry.toolServers.usingConnection(s.orgId, found.PCID);
    if (used.length > 0) return connectionPage(ctx, found, 409, { error: `Custom servers call with this connection: ${used.join(', ')}; delete them first.` });
    await deps.tools.connections.remove(s.orgId, found.PCID);
    ctx.status = 303;
    ctx.redirect('/console/connections?done=deleted');
  });
}
