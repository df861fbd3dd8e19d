/** Triggers' schedules (Temporal Schedules): list, show, set, pause, resume, delete. */
import type { Command } from 'commander';
import { contextOf } from './context';
import { CliError, EXIT } from './errors';
import { isRecord, readDocument } from './inputs';
import { printJson, show, showObject } from './output';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

/** One line per schedule: its live state in a few columns. */
function flat(schedule: Row): Row {
  const state = isRecord(schedule.state) ? schedule.state : {};
  const next = Array.isArray(state.nextFireTimes) ? state.nextFireTimes : [];
  const when = Array.isArray(schedule.cron) ? schedule.cron.join(' | ') : isRecord(schedule.interval) ? `every ${String(schedule.interval.every)}` : '';
  return { ...schedule, when, paused: state.paused, nextFire: next[0] ?? '', actionsTaken: state.actionsTaken };
}

export function scheduleCommands(program: Command): void {
  const sc = program.command('schedules').description('schedules of triggers (Temporal Schedules)');
  sc.command('list').description('the organization\'s schedules with their live state').action(async (_o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<{ schedules: Row[] }>('/api/v1/schedules');
    show(c.json, body, body.schedules.map(flat), ['triggerId', 'scheduleId', 'when', 'timeZone', 'paused', 'nextFire', 'actionsTaken']);
  });
  sc.command('show <triggerId>').description('a trigger with its schedule, next fire times and recent runs').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    showObject(c.json, await c.client.get<Row>(`/api/v1/triggers/${enc(id)}`));
  });
  sc.command('set <triggerId> <file>').description('set or replace a trigger\'s schedule from a JSON or YAML file (- for stdin)')
    .action(async (id: string, file: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const schedule = readDocument(file);
      if (!isRecord(schedule)) throw new CliError(`${file} must hold an object`, EXIT.USAGE);
      showObject(c.json, (await c.client.request<Row>('PUT', `/api/v1/triggers/${enc(id)}/schedule`, { body: schedule })).body);
    });
  for (const action of ['pause', 'resume'] as const) {
    sc.command(`${action} <triggerId>`).description(`${action} a trigger's schedule`).option('--note <text>', 'a note shown with the schedule (Web UI too)')
      .action(async (id: string, o: { note?: string }, cmd: Command) => {
        const c = contextOf(cmd);
        const body = (await c.client.request<Row>('POST', `/api/v1/triggers/${enc(id)}/schedule/${action}`, { body: o.note ? { note: o.note } : {} })).body;
        if (c.json) printJson(body);
        else process.stdout.write(`${action === 'pause' ? 'paused' : 'resumed'} ${String(body.scheduleId)}\n`);
      });
  }
  sc.command('delete <triggerId>').description('remove a trigger\'s schedule (the trigger stays)').action(async (id: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    await c.client.request('DELETE', `/api/v1/triggers/${enc(id)}/schedule`);
    if (c.json) printJson({ triggerId: id, scheduleDeleted: true });
    else process.stdout.write(`deleted the schedule of ${id}\n`);
  });
}
