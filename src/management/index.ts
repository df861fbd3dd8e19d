/**
 * The management room (docs/architecture.md): the domain operations behind the management API,
 * the console and, later, other doors (definitions as code, management as MCP tools). Built once
 * in src/app/services.ts. Each operation answers a value or a refusal with a code (outcome.ts);
 * the doors only parse, call and word the answer.
 */
import type { AlertAdmin } from './alerts';
import type { BudgetAdmin } from './budgets';
import type { DefinitionAdmin } from './definitions';
import type { KeyAdmin } from './keys';
import type { MemberAdmin } from './members';
import type { TriggerAdmin } from './triggers';
import type { WorkflowAdmin } from './workflows';

export interface Management {
  workflows: WorkflowAdmin;
  triggers: TriggerAdmin;
  /** organizations, admin tokens and API keys */
  keys: KeyAdmin;
  members: MemberAdmin;
  /** organizations' monthly budgets of agent usage */
  budgets: BudgetAdmin;
  /** organizations' alert rules on run outcomes */
  alerts: AlertAdmin;
  /** definitions as code: plan, apply and export of a folder (docs/definitions-as-code.md) */
  definitions: DefinitionAdmin;
}

export { AlertAdmin } from './alerts';
export { BudgetAdmin, type BudgetPatch, type BudgetView } from './budgets';
export { KeyAdmin, ADMIN_TOKEN_PREFIX, API_KEY_PREFIX, adminTokenId, type AdminActor } from './keys';
export { MemberAdmin, MEMBER_TOKEN_PREFIX, memberTokenId, NO_ADMIN_TOKEN_LEFT, removalBody } from './members';
export { TriggerAdmin, type TriggerBody, type ScheduleView } from './triggers';
export { WorkflowAdmin } from './workflows';
export { DefinitionAdmin, type WorkflowAsCode, ApplyRequestSchema, ExportSchema, PlanSchema, type AgentPort, type ApplyRequest, type ConnectionPort, type MemberPort, type Plan, type ServerPort } from './definitions';
export type { DefinitionIssue, ManagementRefusal, ManagementRefusalCode, Outcome } from './outcome';
