/**
 * What a call on the tool gateway needs of a caller that has a role (a member signed in by URL:
 * docs/people-and-roles.md "On the tool gateway"). Callers without a role (a runtime token of an
 * API key, an admin token's grant) keep every permission. Reads — listing tools, reading a task,
 * discovery and the read-only agent tools — need `read`; tools that change agents need `agents.write`; deciding
 * an approval (tasks/update, an elicitation's answer) needs `approvals.decide`; any other tool call
 * and cancelling a task need `runs.operate` (a tool acts: it starts runs, sends mail, calls APIs).
 */
import { fieldOf } from '../common/narrow';
import type { Permission } from './roles';

/** agent-management tools that only read */
const READ_TOOLS = new Set(['agent_list', 'agent_read', 'agent_invocation_status', 'chat_list', 'chat_list_artifacts']);
/** agent-management tools that change an agent */
const AGENT_WRITE_TOOLS = new Set(['agent_create', 'agent_update', 'agent_delete']);

/** The permission a `tools/call` of `tool` on `server` needs. */
export function toolPermission(server: string, tool: string): Permission {
  // the catalog and discovery (listServers, capabilities_discover, capability_details) only read
  if (server === 'mcp') return 'read';
  if (server === 'agent-management') {
    if (READ_TOOLS.has(tool)) return 'read';
    if (AGENT_WRITE_TOOLS.has(tool)) return 'agents.write';
  }
  return 'runs.operate';
}

/** The permission an MCP request needs: by its method, and for `tools/call` by its tool. */
export function mcpPermission(method: string, server: string, params: unknown): Permission {
  switch (method) {
    case 'tools/call': {
      const name = fieldOf(params, 'name');
      return toolPermission(server, typeof name === 'string' ? name : '');
    }
    case 'tasks/update':
      return 'approvals.decide';
    case 'tasks/cancel':
      return 'runs.operate';
    default:
      return 'read';
  }
}
