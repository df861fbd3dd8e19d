/** Management objects: workflows, triggers, API keys, connections, custom servers and agents. */
import type { Command } from 'commander';
import { contextOf } from './context';
import { CliError, EXIT } from './errors';
import { collect, isRecord, parsePairs, readDocument, readText } from './inputs';
import { printJson, show, showObject } from './output';
import { holdCommands } from './run-batch';
import { triggerWebhookCommands, webhookFields, withWebhookOptions, type WebhookCreateOptions } from './trigger-webhooks';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

function document(file: string): Row {
  const value = readDocument(file);
  if (!isRecord(value)) throw new CliError(`${file} must hold an object`, EXIT.USAGE);
  return value;
}

function done(json: boolean, value: Row, human: string): void {
  if (json) printJson(value);
  else process.stdout.write(`${human}\n`);
}

export function workflowCommands(program: Command): void {
  const wf = program.command('workflows').alias('wf').description('workflow definitions and their versions');
  wf.command('list').description('list workflows').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ workflows: Row[] }>('/api/v1/workflows');
    show(c.json, body, body.workflows, ['id', 'name', 'publishedVersion', 'updatedAt']);
  });
  wf.command('create <file>').description('create a workflow from a JSON or YAML definition (- for stdin)')
    .option('--publish', 'publish it at once').action(async (file: string, o: { publish?: boolean }, cmd: Command) => {
      const c = contextOf(cmd);
      const created = (await c.client.request<Row>('POST', '/api/v1/workflows', { body: document(file) })).body;
      const published = o.publish ? (await c.client.request<Row>('POST', `/api/v1/workflows/${enc(String(created.id))}/publish`)).body : undefined;
      done(c.json, published ? { ...created, published } : created, `${String(created.id)}${published ? ` (published version ${String(published.version)})` : ''}`);
    });
  wf.command('update <id> <file>').description('replace the draft of a workflow').action(async (id: string, file: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const updated = (await c.client.request<Row>('PUT', `/api/v1/workflows/${enc(id)}`, { body: document(file) })).body;
    done(c.json, updated, `updated the draft of ${id}`);
  });
  wf.command('publish <id>').description('freeze the draft as the next version').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const version = (await c.client.request<Row>('POST', `/api/v1/workflows/${enc(id)}/publish`)).body;
    done(c.json, version, `published ${id} version ${String(version.version)}`);
  });
  wf.command('show <id>').description('a workflow with its draft').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<Row>(`/api/v1/workflows/${enc(id)}`);
    showObject(c.json, body);
  });
  holdCommands(wf, 'workflow');
  wf.command('delete <id>').description('delete a workflow, its versions and its triggers (started runs go on)').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/workflows/${enc(id)}`);
    done(c.json, { id, deleted: true }, `deleted ${id}`);
  });
}

export function triggerCommands(program: Command): void {
  const tr = program.command('triggers').description('entry points of published workflows');
  tr.command('list').option('--workflow <id>', 'only this workflow\'s').action(async (o: { workflow?: string }, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ triggers: Row[] }>(`/api/v1/triggers${o.workflow ? `?workflowId=${enc(o.workflow)}` : ''}`);
    show(c.json, body, body.triggers, ['id', 'workflowId', 'name', 'createdAt']);
  });
  withWebhookOptions(tr.command('create <workflowId>').option('--name <name>').option('--output-step <n>', 'designated output step', (v) => Number(v))
    .option('--output-file <name>', 'file name of the designated output')
    .option('--callback-url <url>', 'POST every run\'s final status there (Standard Webhooks signature)'))
    .action(async (workflowId: string, o: { name?: string; outputStep?: number; outputFile?: string; callbackUrl?: string } & WebhookCreateOptions, cmd: Command) => {
      const c = contextOf(cmd);
      const body: Row = { workflowId, ...(o.name ? { name: o.name } : {}), ...(o.callbackUrl ? { callbackUrl: o.callbackUrl } : {}), ...webhookFields(o) };
      if (o.outputStep !== undefined) body.designatedOutput = { stepIndex: o.outputStep, ...(o.outputFile ? { fileName: o.outputFile } : {}) };
      const trigger = (await c.client.request<Row>('POST', '/api/v1/triggers', { body })).body;
      done(c.json, trigger, String(trigger.id));
    });
  tr.command('change <id> [file]')
    .description('change the trigger in place (PATCH: same ID, URL, keys and secrets): the fields of FILE (JSON or YAML) and of each --set; a field left out is kept, null removes it')
    .option('--set <field=value>', 'a field (JSON value, else text; null removes it), repeatable', collect, [])
    .action(async (id: string, file: string | undefined, o: { set: string[] }, cmd: Command) => {
      const c = contextOf(cmd);
      const fromFile = file === undefined ? {} : readDocument(file);
      if (!isRecord(fromFile)) throw new CliError(`${file ?? ''}: expected an object of the trigger's fields`, EXIT.USAGE);
      const body = { ...fromFile, ...parsePairs(o.set) };
      if (Object.keys(body).length === 0) throw new CliError('nothing to change: give a FILE or --set field=value', EXIT.USAGE);
      const trigger = (await c.client.request<Row>('PATCH', `/api/v1/triggers/${enc(id)}`, { body })).body;
      done(c.json, trigger, `${id} changed`);
    });
  holdCommands(tr, 'trigger');
  for (const action of ['disable', 'enable'] as const) {
    tr.command(`${action} <id>`).description(action === 'disable' ? 'refuse calls (409 trigger_disabled) until enabled again' : 'accept calls again')
      .action(async (id: string, _o, cmd: Command) => {
        const c = contextOf(cmd);
        const trigger = (await c.client.request<Row>('POST', `/api/v1/triggers/${enc(id)}/${action}`)).body;
        done(c.json, trigger, `${id} ${trigger.enabled ? 'enabled' : 'disabled'}`);
      });
  }
  const secret = program.command('webhook-secret').description('the organization\'s completion-callback signing secret');
  secret.command('show').description('the secret (created on first use)').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<Row>('/api/v1/webhook-secret');
    done(c.json, body, String(body.secret));
  });
  secret.command('rotate').description('a new secret; the previous one keeps signing beside it for 24 hours').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = (await c.client.request<Row>('POST', '/api/v1/webhook-secret/rotate')).body;
    done(c.json, body, String(body.secret));
  });
  tr.command('delete <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/triggers/${enc(id)}`);
    done(c.json, { id, deleted: true }, `deleted ${id}`);
  });
  triggerWebhookCommands(tr);
}

export function apiKeyCommands(program: Command): void {
  const keys = program.command('api-keys').description('API keys (for triggers, polling and the tool gateway)');
  keys.command('list').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ apiKeys: Row[] }>('/api/v1/api-keys');
    show(c.json, body, body.apiKeys, ['id', 'name', 'createdAt', 'revokedAt']);
  });
  keys.command('create').option('--name <name>').action(async (o: { name?: string }, cmd: Command) => {
    const c = contextOf(cmd);
    const key = (await c.client.request<Row>('POST', '/api/v1/api-keys', { body: o.name ? { name: o.name } : {} })).body;
    done(c.json, key, `${String(key.id)}\n${String(key.key)}   (shown once: keep it)`);
  });
  keys.command('revoke <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/api-keys/${enc(id)}`);
    done(c.json, { id, revoked: true }, `revoked ${id}`);
  });
}

export function connectionCommands(program: Command): void {
  const con = program.command('connections').description('stored credentials of applications');
  con.command('list').option('--application <name>').action(async (o: { application?: string }, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ connections: Row[] }>(`/api/v1/connections${o.application ? `?application=${enc(o.application)}` : ''}`);
    show(c.json, body, body.connections ?? [], ['id', 'application', 'name', 'createdAt']);
  });
  con.command('create <file>').description('from a JSON or YAML file {application, name?, credentials}').action(async (file: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const created = (await c.client.request<Row>('POST', '/api/v1/connections', { body: document(file) })).body;
    done(c.json, created, String(created.id));
  });
  con.command('test <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    showObject(c.json, (await c.client.request<Row>('POST', `/api/v1/connections/${enc(id)}/test`)).body);
  });
  con.command('delete <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/connections/${enc(id)}`);
    done(c.json, { id, deleted: true }, `deleted ${id}`);
  });
}

export function serverCommands(program: Command): void {
  const srv = program.command('servers').description('custom tool servers (OpenAPI-generated or remote MCP)');
  srv.command('list').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ servers: Row[] }>('/api/v1/servers');
    show(c.json, body, body.servers ?? [], ['id', 'name', 'kind', 'connection']);
  });
  srv.command('create').option('--openapi <file>', 'an OpenAPI document (JSON or YAML)').option('--url <url>', 'a remote MCP endpoint')
    .option('--name <name>').option('--description <text>').option('--connection <id>')
    .action(async (o: { openapi?: string; url?: string; name?: string; description?: string; connection?: string }, cmd: Command) => {
      if (Boolean(o.openapi) === Boolean(o.url)) throw new CliError('give exactly one of --openapi FILE and --url URL', EXIT.USAGE);
      const c = contextOf(cmd);
      const body: Row = {
        ...(o.openapi ? { document: readText(o.openapi) } : { url: o.url }),
        ...(o.name ? { name: o.name } : {}), ...(o.description ? { description: o.description } : {}), ...(o.connection ? { connection: o.connection } : {}),
      };
      const created = (await c.client.request<Row>('POST', '/api/v1/servers', { body })).body;
      done(c.json, created, String(created.id));
    });
  srv.command('show <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    showObject(c.json, await c.client.get<Row>(`/api/v1/servers/${enc(id)}`));
  });
  srv.command('delete <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/servers/${enc(id)}`);
    done(c.json, { id, deleted: true }, `deleted ${id}`);
  });
}

export function agentCommands(program: Command): void {
  const ag = program.command('agents').description('agents over tool servers and workflows');
  ag.command('list').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ agents: Row[] }>('/api/v1/agents');
    show(c.json, body, body.agents ?? [], ['id', 'name', 'description']);
  });
  ag.command('create <file>').description('from a JSON or YAML agent definition').action(async (file: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const created = (await c.client.request<Row>('POST', '/api/v1/agents', { body: document(file) })).body;
    done(c.json, created, String(created.id));
  });
  ag.command('show <id>').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    showObject(c.json, await c.client.get<Row>(`/api/v1/agents/${enc(id)}`));
  });
  ag.command('invoke <id> <message...>').option('--chat <chatId>').option('--wait <seconds>', 'wait up to N seconds (max 60)', (v) => Number(v), 60)
    .action(async (id: string, message: string[], o: { chat?: string; wait: number }, cmd: Command) => {
      const c = contextOf(cmd);
      const reply = await c.client.request<Row>('POST', `/api/v1/agents/${enc(id)}/invoke`, {
        body: { message: message.join(' '), waitSeconds: o.wait, ...(o.chat ? { chatId: o.chat } : {}) }, timeoutMs: (o.wait + 15) * 1000,
      });
      showObject(c.json, reply.body);
    });
}
