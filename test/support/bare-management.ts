/**
 * The management room (src/management/) for a gateway a test assembles by hand with `createApp`
 * (a gateway without some service): workflows, triggers, keys, members, budgets and alert rules on
 * the test instance's registry; definitions as code apply workflows and triggers, and refuse custom
 * servers and agents (no test that builds its gateway by hand applies those).
 */
import { AlertAdmin, BudgetAdmin, DefinitionAdmin, KeyAdmin, MemberAdmin, TriggerAdmin, WorkflowAdmin, type Management } from '../../src/management';
import { silentLogger } from '../../src/observability/logger';
import type { TestFlowgate } from './flowgate';

export function bareManagement(fg: TestFlowgate): Management {
  const workflows = new WorkflowAdmin({ registry: fg.registry, schedules: fg.schedules, log: silentLogger });
  const triggers = new TriggerAdmin({ registry: fg.registry, schedules: fg.schedules });
  const refuse = (): Promise<never> => Promise.reject(new Error('not in a hand-built gateway'));
  return {
    workflows,
    triggers,
    definitions: new DefinitionAdmin({
      registry: fg.registry, workflows, triggers,
      servers: { register: refuse, replace: refuse, remove: refuse },
      agents: { create: refuse, update: refuse, remove: refuse },
    }),
    keys: new KeyAdmin({ registry: fg.registry, forgetKeys: () => undefined }),
    members: new MemberAdmin({ registry: fg.registry, forgetKeys: () => undefined }),
    budgets: new BudgetAdmin({ registry: fg.registry }),
    alerts: new AlertAdmin({ registry: fg.registry }),
  };
}
