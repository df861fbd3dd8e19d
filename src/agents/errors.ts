/** What the agent service refuses, with a code each door (HTTP, the agent-management tools) maps to its own error. */
export type AgentErrorCode = 'NOT_FOUND' | 'INVALID' | 'NOT_CONFIGURED' | 'BUDGET_EXHAUSTED';

export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(readonly code: AgentErrorCode, message: string) {
    super(message);
  }
}
