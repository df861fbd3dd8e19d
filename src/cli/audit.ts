/** `flowgate audit`: the organization's audit trail (GET /api/v1/audit), newest first, filtered and paged. */
import type { Command } from 'commander';
import type { AuditRecordBody } from '../contracts/audit-bodies';
import { contextOf } from './context';
import { show } from './output';

const FILTERS = ['action', 'actor', 'target', 'outcome', 'since', 'until', 'limit', 'cursor'] as const;

/** One line per record: who, what, on what, how it went. */
function row(record: AuditRecordBody): Record<string, unknown> {
  return {
    at: record.at, actor: record.actorName ? `${record.actor} (${record.actorName})` : record.actor, action: record.action,
    target: record.target ? `${record.target.type}:${record.target.id ?? '-'}` : '-', outcome: record.outcome, status: record.status,
    source: record.source.ip,
  };
}

export function auditCommand(program: Command): void {
  program.command('audit').description('the organization\'s audit trail, newest first: who did what, with which credential, how it went')
    .option('--action <action>', 'an action, or a prefix ending in . or * (api_key.*)')
    .option('--actor <actor>', 'admin, instance-admin, api-key:<id> or approver:<name>')
    .option('--target <target>', '<type> or <type>:<id> (workflow:wf_…, tool:mail/send_mail)')
    .option('--outcome <outcome>', 'success, refused or failed')
    .option('--since <time>', 'records at or after this ISO 8601 time')
    .option('--until <time>', 'records before this ISO 8601 time')
    .option('--limit <n>', 'records per page (1 to 500, default 50)')
    .option('--cursor <cursor>', 'the next page (printed after a full page)')
    .action(async (o: Partial<Record<(typeof FILTERS)[number], string>>, cmd: Command) => {
      const c = contextOf(cmd);
      const query = new URLSearchParams();
      for (const name of FILTERS) if (o[name] !== undefined) query.set(name, o[name]);
      const body = await c.client.get<{ records: AuditRecordBody[]; nextCursor: string | null }>(`/api/v1/audit${query.size ? `?${query}` : ''}`);
      show(c.json, body, body.records.map(row), ['at', 'actor', 'action', 'target', 'outcome', 'status', 'source']);
      if (!c.json && body.nextCursor) process.stderr.write(`more: flowgate audit --cursor ${body.nextCursor}\n`);
    });
}
