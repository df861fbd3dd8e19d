/**
 * What the routes that read a run share (the polling surface, the management API): finding the
 * admin's run (another organization's is a 404 like a missing one), its designated output and the
 * app's run watcher.
 */
import type { DesignatedOutput } from '../registry';
import type { RunBrief, RunView } from '../runs/run-service';
import type { RunWatcher } from '../runs/run-watcher';
import type { GatewayDeps } from './deps';
import { notFound } from './http-error';
import { adminOf, type GatewayRouterContext } from './state';
import { callTemporal } from './temporal-errors';

/** Who an operator's action on runs is by (the actor of pauses, batches and holds): `member:<email>`, `instance-admin` or `admin`. */
export function operatorOf(ctx: GatewayRouterContext): string {
  const principal = adminOf(ctx);
  return principal.member ? `member:${principal.member.email}` : principal.instanceAdmin ? 'instance-admin' : 'admin';
}

/** The run if it belongs to the admin's organization: another org's run is a 404 like a missing one. */
export async function ownRun(ctx: GatewayRouterContext, deps: Pick<GatewayDeps, 'runs'>): Promise<RunView> {
  const view = await callTemporal(() => deps.runs.view(ctx.params.runId ?? ''));
  if (!view || view.memo.orgId !== adminOf(ctx).orgId) throw notFound('unknown_run', `no run ${ctx.params.runId}`);
  return view;
}

/** As ownRun, from describe alone (no worker needed): for actions that must be answered whatever the worker does. */
export async function ownBrief(ctx: GatewayRouterContext, deps: Pick<GatewayDeps, 'runs'>): Promise<RunBrief> {
  const brief = await callTemporal(() => deps.runs.brief(ctx.params.runId ?? ''));
  if (!brief || brief.memo.orgId !== adminOf(ctx).orgId) throw notFound('unknown_run', `no run ${ctx.params.runId}`);
  return brief;
}

/** The trigger's designated output wins; else the workflow definition's `output`. */
export async function designatedOutput(deps: Pick<GatewayDeps, 'registry'>, view: RunView): Promise<DesignatedOutput | undefined> {
  const trigger = await deps.registry.triggers.get(view.memo.triggerId);
  if (trigger?.designatedOutput) return trigger.designatedOutput;
  const version = await deps.registry.workflows.getVersion(view.memo.automationId, view.memo.automationVersion);
  return version?.definition.output;
}

/** The app's run watcher (built once with the other services, src/app/services.ts). */
export function watcherOf(deps: Pick<GatewayDeps, 'watcher'>): RunWatcher {
  return deps.watcher;
}
