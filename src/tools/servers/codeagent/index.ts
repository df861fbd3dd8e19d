/**
 * The `codeagent` server: seventeen tools over a Cursor Cloud Agents v1 backend (contract 4.8),
 * an application server, so every tool takes the `PCID` of a `codeagent` connection whose
 * credentials (CodeAgentCredentialsSchema) hold the API key and, optionally, the base URL.
 */
import { toolServer } from '../../define-tool';
import type { ToolServer } from '../../server';
import { CODEAGENT_APPLICATION } from './schemas';
import { CODEAGENT_TOOLS } from './tools';

export { CODEAGENT_APPLICATION, CodeAgentCredentialsSchema, type CodeAgentCredentials } from './schemas';
export const CODEAGENT_SERVER_NAME = 'codeagent';

export function codeAgentServer(): ToolServer {
  return toolServer({
    name: CODEAGENT_SERVER_NAME,
    description: 'Run cloud code agents on a repository: start agents and follow-up runs, follow their events, fetch their artifacts.',
    application: CODEAGENT_APPLICATION,
    tools: CODEAGENT_TOOLS,
  });
}
