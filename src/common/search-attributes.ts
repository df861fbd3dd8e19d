/** The search attributes flowgate writes on every run, so visibility can list an organization's runs. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  orgId: defineSearchAttributeKey('FlowgateOrgId', SearchAttributeType.KEYWORD),
  automationId: defineSearchAttributeKey('FlowgateAutomationId', SearchAttributeType.KEYWORD),
  triggerId: defineSearchAttributeKey('FlowgateTriggerId', SearchAttributeType.KEYWORD),
  /** set on agent invocations (workflow type invokeAgent) */
  agentId: defineSearchAttributeKey('FlowgateAgentId', SearchAttributeType.KEYWORD),
} as const;
