/**
 * The console's page families, each in a route file of its own, added in this order to the one
 * console router that routes/console.ts builds (app.ts hands this list over): route files never
 * import one another.
 */
import type { ConsolePageFamily } from './console/kit';
import { addConsoleAgentRoutes } from './routes/console-agents';
import { consoleAgentEditRoutes } from './routes/console-agent-edit';
import { addConnectionRoutes } from './routes/console-connections';
import { consoleKeyRoutes } from './routes/console-keys';
import { consolePeopleRoutes } from './routes/console-people';
import { addServerRoutes } from './routes/console-servers';
import { consoleScheduleRoutes } from './routes/console-schedules';
import { consoleTriggerRoutes } from './routes/console-triggers';
import { consoleWorkflowRoutes } from './routes/console-workflows';
import { consoleTemporalUiRoutes } from './routes/console-temporal-ui';
import { consoleBatchRoutes } from './routes/console-batches';
import { consoleAlertRoutes } from './routes/console-alerts';

export const CONSOLE_PAGE_FAMILIES: readonly ConsolePageFamily[] = [
  // before the agent pages: /agents/new is not an agent's ID
  (router, { deps, kit }) => consoleAgentEditRoutes(router, deps, kit),
  (router, { deps, positional }) => addConsoleAgentRoutes(router, deps, positional),
  (router, { positional }) => addConnectionRoutes(router, positional),
  (router, { positional }) => addServerRoutes(router, positional),
  (router, { deps, kit }) => consoleWorkflowRoutes(router, deps, kit),
  (router, { deps, kit }) => consoleTriggerRoutes(router, deps, kit),
  (router, { deps, kit }) => consoleScheduleRoutes(router, deps, kit),
  (router, { deps, kit, shownOnce }) => consoleKeyRoutes(router, deps, kit, shownOnce),
  (router, { deps, kit }) => consolePeopleRoutes(router, deps, kit),
  (router, { deps, kit }) => consoleTemporalUiRoutes(router, deps, kit),
  (router, { deps, kit }) => consoleBatchRoutes(router, deps, kit),
  (router, { deps, kit }) => consoleAlertRoutes(router, deps, kit),
];
