/** Which model serves an agent: the operator's endpoint, the agent's model name or the default one. */
import type { Config } from '../config/config';

export const MODEL_NOT_CONFIGURED = 'no model is configured for agents: set FLOWGATE_LLM_BASE_URL and FLOWGATE_LLM_MODEL (and FLOWGATE_LLM_API_KEY if the endpoint needs one) on the gateways and workers';

export function modelFor(llm: Readonly<Config['llm']>, agent: { model: { model?: string } }): { baseUrl: string; model: string } | string {
  const model = agent.model.model ?? llm.model;
  if (llm.baseUrl === undefined || model === undefined) return MODEL_NOT_CONFIGURED;
  return { baseUrl: llm.baseUrl, model };
}
