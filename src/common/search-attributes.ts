/** The search attributes flowgate writes on every run, so visibility can list an organization's runs. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  orgId: defineSearchAttributeKey('FlowgateOrgId', SearchAttributeType.KEYWORD),
  automationId: defineSearchAttributeKey('FlowgateAutomationId', SearchAttributeType.KEYWORD),
  triggerId: defineSearchAttributeKey('FlowgateTriggerId', SearchAttributeType.KEYWORD),
  /** set on agent invocations (workflow type invokeAgent) */
  agentId: defineSearchAttributeKey('FlowgateAgentId', SearchAttributeType.KEYWORD),
  /**
   * the run's readable name, for the Temporal Web UI's Workflows list (a column an operator adds):
   * the workflow's name (`Release train`), or `agent <name>` for an agent invocation. Unlike the
   * summary (a payload, sealed), it is in clear in Temporal: names, never run data.
   */
  workflowName: defineSearchAttributeKey('FlowgateWorkflowName', SearchAttributeType.KEYWORD),
} as const;

/** A name as the FlowgateWorkflowName search attribute holds it (Temporal bounds a Keyword's length). */
export function nameAttribute(name: string): string {
  return name.length > 200 ? `${name.slice(0, 199)}…` : name;
}
