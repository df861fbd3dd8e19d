/** Alert rules on run outcomes, approval waits and budget use (docs/operations.md "Alerts"): list, show, create, delete. Admins only. */
import type { Command } from 'commander';
import { contextOf } from './context';
import { CliError, EXIT } from './errors';
import { isRecord, readDocument } from './inputs';
import { printJson, show, showObject } from './output';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

interface CreateOptions {
  name?: string;
  kind?: string;
  workflow?: string;
  threshold?: string;
  ratio?: string;
  minRuns?: string;
  window?: string;
  after?: string;
  percent?: string;
  cooldown?: string;
  webhook?: string;
  emailConnection?: string;
  to?: string[];
  handlerTrigger?: string;
  disabled?: boolean;
}

/** One line per rule. */
function flat(rule: Row): Row {
  const condition = isRecord(rule.condition) ? rule.condition : {};
  const destination = isRecord(rule.destination) ? rule.destination : {};
  const when = condition.kind === 'failure_rate'
    ? `${condition.threshold !== undefined ? `>= ${String(condition.threshold)} failures` : `>= ${String(condition.ratio)} failed`} in ${String(condition.windowSeconds)}s`
    : condition.kind === 'approval_waiting' ? `approval waiting > ${String(condition.afterSeconds)}s`
      : condition.kind === 'budget' ? `monthly budget >= ${String(condition.percent)}%` : 'any failure';
  const to = destination.type === 'webhook' ? destination.url : destination.type === 'email' ? destination.to : destination.triggerId;
  return { ...rule, workflow: condition.workflowId ?? '(any)', when, destination: `${String(destination.type)}: ${String(to)}` };
}

const int = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new CliError(`--${name} must be a number`, EXIT.USAGE);
  return n;
};

/** A rule from the flags (`create` without a file). */
function ruleOf(o: CreateOptions): Row {
  if (!o.name) throw new CliError('--name is required (or give the rule as a file)', EXIT.USAGE);
  const kind = o.kind ?? (o.window ? 'failure_rate' : o.after ? 'approval_waiting' : o.percent ? 'budget' : 'run_failed');
  const condition: Row = { kind, ...(o.workflow ? { workflowId: o.workflow } : {}) };
  if (kind === 'failure_rate') {
    Object.assign(condition, { windowSeconds: int('window', o.window), threshold: int('threshold', o.threshold), ratio: int('ratio', o.ratio), minRuns: int('min-runs', o.minRuns) });
  }
  if (kind === 'approval_waiting') condition.afterSeconds = int('after', o.after);
  if (kind === 'budget') condition.percent = int('percent', o.percent);
  if (o.cooldown) condition.cooldownSeconds = int('cooldown', o.cooldown);
  const destinations = [
    o.webhook ? { type: 'webhook', url: o.webhook } : undefined,
    o.emailConnection ? { type: 'email', connectionId: o.emailConnection, to: o.to ?? [] } : undefined,
    o.handlerTrigger ? { type: 'workflow', triggerId: o.handlerTrigger } : undefined,
  ].filter((d) => d !== undefined);
  if (destinations.length !== 1) throw new CliError('name exactly one destination: --webhook, --email-connection (with --to) or --handler-trigger', EXIT.USAGE);
  // undefined fields are left out of the JSON body
  return { name: o.name, condition, destination: destinations[0], enabled: !o.disabled };
}

export function alertCommands(program: Command): void {
  const al = program.command('alerts').description('alert rules on run outcomes (admins)');
  al.command('list').description('the organization\'s alert rules').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ alerts: Row[] }>('/api/v1/alerts');
    show(c.json, body, body.alerts.map(flat), ['id', 'name', 'kind', 'workflow', 'when', 'destination', 'enabled']);
  });
  al.command('show <id>').description('one alert rule').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    showObject(c.json, await c.client.get<Row>(`/api/v1/alerts/${enc(id)}`));
  });
  al.command('create [file]').description('create a rule from a JSON or YAML file (- for stdin), or from the flags')
    .option('--name <name>', 'the rule\'s name')
    .option('--kind <kind>', 'run_failed (default), failure_rate (default with --window), approval_waiting (default with --after) or budget (default with --percent)')
    .option('--workflow <workflowId>', 'only runs of this workflow')
    .option('--window <seconds>', 'failure_rate: the window')
    .option('--threshold <count>', 'failure_rate: fires at this many failures in the window')
    .option('--ratio <share>', 'failure_rate: or at this share of failed runs (0-1]')
    .option('--min-runs <count>', 'failure_rate with --ratio: the runs that must have ended in the window first')
    .option('--after <seconds>', 'approval_waiting: fires for a run waiting at an approval this long (once per run)')
    .option('--percent <share>', 'budget: fires once per month when the organization\'s monthly budget reaches this percent')
    .option('--cooldown <seconds>', 'at most one delivery per this many seconds')
    .option('--webhook <url>', 'deliver to this URL (signed with the organization\'s webhook secret)')
    .option('--email-connection <connectionId>', 'deliver by e-mail through this mail connection')
    .option('--to <address...>', 'with --email-connection: the recipients')
    .option('--handler-trigger <triggerId>', 'start the error-handler workflow through this trigger')
    .option('--disabled', 'create it disabled')
    .action(async (file: string | undefined, o: CreateOptions, cmd: Command) => {
      const c = contextOf(cmd);
      const rule = file === undefined ? ruleOf(o) : readDocument(file);
      if (!isRecord(rule)) throw new CliError(`${file ?? 'the rule'} must hold an object`, EXIT.USAGE);
      const body = (await c.client.request<Row>('POST', '/api/v1/alerts', { body: rule })).body;
      if (c.json) printJson(body);
      else process.stdout.write(`created alert rule ${String(body.id)} (${String(body.name)})\n`);
    });
  al.command('delete <id>').description('delete an alert rule').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/alerts/${enc(id)}`);
    if (c.json) printJson({ id, deleted: true });
    else process.stdout.write(`deleted alert rule ${id}\n`);
  });
}
