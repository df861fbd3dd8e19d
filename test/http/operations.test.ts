/**
 * One description per route (src/http/operation.ts, src/http/operations.ts): a route added with one
 * entry shows in the OpenAPI document, the audit action table and the permission table, and the
 * router serves it from the same entry, which is what the management guard and the audit
 * middleware read.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import SwaggerParser from '@apidevtools/swagger-parser';
import { z } from 'zod';
import { mount, operationOf, permissionOf, type Operation, type Operations } from '../../src/http/operation';
import { OPERATIONS, actionTable, catalog, managementAction, pathsOf, permissionFor, permissionTable } from '../../src/http/operations';
import { openApiDocument } from '../../src/http/openapi';
import { admin, errors, id, json } from '../../src/http/openapi-kit';
import type { GatewayState } from '../../src/http/state';
import { listenOnLoopback } from '../support/loopback';

/** The one entry of a route that does not exist in flowgate. */
const WIDGET_OPERATIONS = {
  pingWidget: {
    method: 'post', path: '/api/v1/widgets/:id/ping', permission: 'runs.operate',
    audit: { action: 'widget.pinged', target: { type: 'widget', id: { param: 'id' } }, answerFields: ['pings'] },
    tags: ['management'], summary: 'Ping a widget', security: admin, requestParams: { path: id('id', 'a widget') },
    responses: { '200': json(z.object({ pings: z.number().int() }).meta({ id: 'WidgetPinged' }), 'pinged'), ...errors(401, 404) },
  },
} satisfies Operations;

describe('operations: one description per route', () => {
  const withWidget = catalog([OPERATIONS, WIDGET_OPERATIONS]);

  it('shows a route added with one entry in the OpenAPI document, the audit actions and the permissions', async () => {
    const doc = openApiDocument({ toolsBasePath: '/tools', version: 'test', operations: withWidget });
    await SwaggerParser.validate(structuredClone(doc) as never);
    const documented = doc.paths?.['/api/v1/widgets/{id}/ping']?.post;
    assert.equal(documented?.operationId, 'pingWidget');
    assert.deepEqual(Object.keys(documented?.responses ?? {}).sort(), ['200', '401', '403', '404'], 'a route a role can be refused documents 403');
    assert.ok(doc.components?.schemas?.WidgetPinged, 'the response schema, from zod');
    assert.equal(openApiDocument({ toolsBasePath: '/tools', version: 'test' }).paths?.['/api/v1/widgets/{id}/ping'], undefined);

    assert.deepEqual(actionTable(withWidget).get('POST /api/v1/widgets/:id/ping'), WIDGET_OPERATIONS.pingWidget.audit);
    assert.equal(permissionTable(withWidget).get('POST /api/v1/widgets/:id/ping'), 'runs.operate');
    assert.equal(actionTable(OPERATIONS).get('POST /api/v1/widgets/:id/ping'), undefined);
  });

  it('serves the route from the same entry: its path, and the entry the guard and the audit trail read', async () => {
    const app = new Koa<GatewayState>();
    const router = new Router<GatewayState>({ prefix: '/api/v1' });
    let seen: Operation | undefined;
    router.use(async (ctx, next) => {
      seen = operationOf(ctx);
      await next();
    });
    mount(router, WIDGET_OPERATIONS.pingWidget, (ctx) => {
      ctx.body = { pings: 1, widget: ctx.params.id };
    });
    app.use(router.routes()).use(router.allowedMethods());
    const handle = app.callback();
    // Koa answers every failure itself and never rejects; Node's 'request' event has no use for a promise
    const server = await listenOnLoopback(http.createServer((req, res) => { void handle(req, res); }));
    try {
      const answer = await fetch(`${server.url}/api/v1/widgets/w1/ping`, { method: 'POST' });
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { pings: 1, widget: 'w1' });
      assert.equal(seen, WIDGET_OPERATIONS.pingWidget);
      assert.equal(permissionOf(seen, 'POST'), 'runs.operate');
      assert.equal((await fetch(`${server.url}/api/v1/widgets/w1/ping`)).status, 405, 'only the entry\'s method');
    } finally {
      await server.close();
    }
  });

  it('refuses a route under another prefix than its router\'s, and a route listed twice or described twice', () => {
    assert.throws(() => mount(new Router<GatewayState>({ prefix: '/ext' }), WIDGET_OPERATIONS.pingWidget, () => undefined), /not under the router's prefix/);
    assert.throws(() => catalog([WIDGET_OPERATIONS, { again: { ...WIDGET_OPERATIONS.pingWidget } }]), /listed twice/);
    const openapiTwice = catalog([OPERATIONS, { openapi: { method: 'get', path: '/api/v1/openapi.json', responses: {} } }]);
    assert.throws(() => openApiDocument({ toolsBasePath: '/tools', version: 'test', operations: openapiTwice }), /described by hand and by its operation/);
  });

  it('builds the tables the console and the drift tests read from the routes\' entries', () => {
    for (const [operationId, op] of Object.entries(OPERATIONS)) {
      if (op.audit) assert.deepEqual(managementAction(op.method.toUpperCase(), op.path), op.audit, operationId);
      if (op.permission) assert.equal(permissionFor(op.method.toUpperCase(), op.path), op.permission, operationId);
      if (op.security === admin) assert.ok(op.permission, `${operationId} is a management route: it names its permission`);
    }
    assert.ok(Object.keys(pathsOf(OPERATIONS)).length > 0);
  });
});
