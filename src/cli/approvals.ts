/** `flowgate approvals`: a run's pending approvals, and deciding one as an approver through its signed link. */
import type { Command } from 'commander';
import { contextOf, type CliContext } from './context';
import { CliError } from './errors';
import { printJson, show } from './output';

const enc = encodeURIComponent;

interface ApprovalsBody { runId: string; status: string; approvals: { stepIndex: number; stepName?: string; message?: string; deadline: string; required: number; approvers: { approver: string; decided: boolean; link?: string }[] }[] }

async function decide(c: CliContext, runId: string, decision: 'approve' | 'reject', o: { approver?: string; comment?: string }): Promise<void> {
  const body = await c.client.get<ApprovalsBody>(`/api/v1/runs/${enc(runId)}/approvals`);
  const pending = body.approvals[0];
  if (!pending) throw new CliError(`run ${runId} is not waiting for an approval (${body.status})`);
  const open = pending.approvers.filter((a) => !a.decided && a.link);
  const chosen = o.approver ? open.find((a) => a.approver.toLowerCase() === o.approver!.toLowerCase()) : open[0];
  if (!chosen?.link) throw new CliError(o.approver ? `${o.approver} is not an undecided approver of step ${pending.stepIndex}` : 'no undecided approver left');
  // The approver's own signed link records the decision in that approver's name (via "link").
  const link = new URL(chosen.link);
  const form = new URLSearchParams({ decision, ...(o.comment ? { comment: o.comment } : {}) });
  const reply = await c.client.request('POST', `${link.pathname}${link.search}`, { auth: 'none', raw: { contentType: 'application/x-www-form-urlencoded', data: form.toString() }, headers: { Accept: 'text/html' } });
  // 202: the run did not answer in time; the decision is recorded and applied when it resumes
  const applied = reply.status !== 202;
  const result = { runId, stepIndex: pending.stepIndex, approver: chosen.approver, decision, applied };
  if (c.json) printJson(result);
  else if (!applied) process.stdout.write(`${decision} of step ${pending.stepIndex} of ${runId} as ${chosen.approver} recorded: applied when the run resumes\n`);
  else process.stdout.write(`${decision === 'approve' ? 'approved' : 'rejected'} step ${pending.stepIndex} of ${runId} as ${chosen.approver}\n`);
}

export function approvalCommands(program: Command): void {
  const ap = program.command('approvals').description('pending approvals of runs');
  ap.command('list <runId>').action(async (runId: string, _o, cmd: Command) => {
    const c = contextOf(cmd);
    const body = await c.client.get<ApprovalsBody>(`/api/v1/runs/${enc(runId)}/approvals`);
    const rows = body.approvals.flatMap((a) => a.approvers.map((p) => ({ stepIndex: a.stepIndex, step: a.stepName, approver: p.approver, decided: p.decided, deadline: a.deadline })));
    show(c.json, body, rows, ['stepIndex', 'step', 'approver', 'decided', 'deadline']);
  });
  for (const decision of ['approve', 'reject'] as const) {
    ap.command(`${decision} <runId>`).option('--approver <email>', 'decide as this approver (default: the first undecided one)').option('--comment <text>')
      .action(async (runId: string, o: { approver?: string; comment?: string }, cmd: Command) => decide(contextOf(cmd), runId, decision, o));
  }
}
