/**
 * The import boundaries `npm run lint` holds (issues 29 and 49; docs/architecture.md "Boundaries the
 * lint step holds"): no import circle, type-only imports included, and the layer rules below. Each
 * rule's comment is what the report prints next to a violation, so it says what to do instead.
 * test/lint-deps.test.ts breaks each rule with a probe file in a scratch tree and sees it named.
 * Run it alone: scripts/with-node.sh auto npx depcruise --config .dependency-cruiser.cjs src workflows activities temporal test
 */
/** Loaded into the workflow bundle only by a worker that traces (temporal/worker.ts). */
const TRACING_INTERCEPTORS = '^workflows/run/tracing-interceptors\\.ts$';

/**
 * The rooms of src/ (docs/architecture.md "Layout"). Service rooms hold the domain's operations and
 * are built once in src/app/services.ts; store rooms hold data, keys, files, the configuration and
 * pure code, and know no service. src/http sits above both, src/app composes everything, src/contracts
 * (wire shapes), src/net and src/observability sit beside the stores, usable by every room.
 */
const SERVICE_ROOMS = ['agents', 'attachments', 'audit', 'console', 'management', 'oauth', 'people', 'retention', 'runs', 'schedules', 'tools'];
const STORE_ROOMS = ['blobs', 'cache', 'common', 'config', 'crypto', 'documents', 'llm', 'registry'];
const inRooms = (rooms) => `^src/(${rooms.join('|')})/`;

/**
 * Imports between route modules left from before the rule, each one `[from, to]` under
 * src/http/routes/ (issue 49). Empty since the management services (src/management/) took the
 * last of them; it only shrinks: never add a pair, do what the `routes-import-no-routes` comment
 * says instead.
 */
const ROUTE_IMPORTS_TO_REMOVE = [];

const ROUTES_IMPORT_NO_ROUTES_COMMENT =
  'A route module (src/http/routes/) never imports another route module: routes are HTTP only. Call the service that ' +
  'holds the operation (src/runs/, src/schedules/, src/management/, ...; built in src/app/services.ts and handed over ' +
  'in GatewayDeps), and put a helper several routes share outside src/http/routes/ (e.g. src/http/run-access.ts). ' +
  'Pairs left from before this rule are listed in ROUTE_IMPORTS_TO_REMOVE (.dependency-cruiser.cjs): only remove them.';

/** A route module's name (letters and dashes) → the regular expression of its file. */
const routeFile = (name) => `^src/http/routes/${name}\\.ts$`;
const routesWithExceptions = [...new Set(ROUTE_IMPORTS_TO_REMOVE.map(([from]) => from))];

/** routes-import-no-routes: one rule for every route module without exceptions, one per module with some. */
const routeRules = [
  {
    name: 'routes-import-no-routes',
    severity: 'error',
    comment: ROUTES_IMPORT_NO_ROUTES_COMMENT,
    from: { path: '^src/http/routes/', pathNot: routesWithExceptions.map(routeFile) },
    to: { path: '^src/http/routes/' },
  },
  ...routesWithExceptions.map((from) => ({
    name: 'routes-import-no-routes',
    severity: 'error',
    comment: ROUTES_IMPORT_NO_ROUTES_COMMENT,
    from: { path: routeFile(from) },
    to: {
      path: '^src/http/routes/',
      pathNot: ROUTE_IMPORTS_TO_REMOVE.filter(([f]) => f === from).map(([, to]) => routeFile(to)),
    },
  })),
];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle (type-only imports count: they tie the modules together just the same). Break it by moving the ' +
        'shared piece down a layer, e.g. a type into the module that owns it or into src/contracts/ or src/common/, or by ' +
        'passing the dependency in from the composition root (src/app/) instead of importing it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-imports-no-workflows',
      severity: 'error',
      comment:
        'src/ never imports workflows/. Workflow type names, function types and query/update/signal definitions live in ' +
        'src/common/ (sandbox-safe), which both sides import; type handles and call queries and updates with those.',
      from: { path: '^src/' },
      to: { path: '^workflows/' },
    },
    {
      name: 'activities-import-no-tools-barrel',
      severity: 'error',
      comment:
        'Activities never import the tools barrel (src/tools/index.ts loads every server kind, the agent service and the ' +
        'registry). Import the one module you need, e.g. src/tools/errors.ts or a type from its own file.',
      from: { path: '^activities/' },
      to: { path: '^src/tools/index\\.ts$' },
    },
    ...routeRules,
    {
      name: 'service-rooms-import-no-http',
      severity: 'error',
      comment:
        'A service room (' + SERVICE_ROOMS.join(', ') + ' under src/) never imports src/http/: a service answers ' +
        'values, and a refusal is a value with a code (as TriggerService answers) that the HTTP layer maps to a status in ' +
        'one table. Move a shape both need into src/contracts/, and an HTTP-only helper stays in src/http/.',
      from: { path: inRooms(SERVICE_ROOMS) },
      to: { path: '^src/http/' },
    },
    {
      name: 'only-http-and-app-import-http',
      severity: 'error',
      comment:
        'src/http/ is the top layer: only src/http/ itself, the composition root (src/app/) and tests import it. Move what ' +
        'a lower layer needs (an error type, a body shape, a helper) below it, e.g. into src/contracts/ or the module that ' +
        'owns the concept, and let the HTTP layer map it to a status.',
      // service rooms have their own rule (above), so a violation is reported once
      from: { pathNot: `^(src/http|src/app|test)/|${inRooms(SERVICE_ROOMS)}` },
      to: { path: '^src/http/' },
    },
    {
      name: 'store-rooms-import-no-services',
      severity: 'error',
      comment:
        'A store room (' + STORE_ROOMS.join(', ') + ' under src/) never imports a service room (' + SERVICE_ROOMS.join(', ') +
        '), type-only imports included: the services are built on the stores. Move the shape both need down, into the ' +
        'store that owns it (as src/registry/agent-records.ts) or into src/contracts/ (as src/contracts/roles.ts), and ' +
        'let the service import it from there.',
      from: { path: inRooms(STORE_ROOMS) },
      to: { path: inRooms(SERVICE_ROOMS) },
    },
    {
      name: 'common-stays-sandbox-safe',
      severity: 'error',
      comment:
        'src/common/ is bundled into the workflow sandbox: it imports only src/common/ and the packages that run there ' +
        '(zod, jsonata, @temporalio/workflow, @temporalio/common), type-only imports included. No Node built-in, no ' +
        'registry, no other package: code that needs them belongs in the room that uses it (a cache in src/cache/, a ' +
        'store in src/registry/), and a pure helper stays here without them.',
      from: { path: '^src/common/' },
      to: { pathNot: '^src/common/|(^|/)node_modules/(zod|jsonata|@temporalio/workflow|@temporalio/common)/' },
    },
    {
      name: 'mcp-layer-imports-no-server-kind',
      severity: 'error',
      comment:
        'The generic MCP layer (src/tools/mcp/) knows no server kind: it never imports src/tools/servers/ or ' +
        'src/tools/custom/. A kind reaches it through the interfaces it defines (ToolServer in src/tools/server.ts, ' +
        'TaskKind in src/tools/mcp/task-kind.ts), registered in src/tools/servers/index.ts and task-kinds.ts and ' +
        'handed over at start (src/app/services.ts).',
      from: { path: '^src/tools/mcp/' },
      to: { path: '^src/tools/(servers|custom)/' },
    },
    {
      name: 'workflows-import-only-sandbox-safe-values',
      severity: 'error',
      comment:
        'Workflow code runs in the deterministic sandbox: it imports values only from @temporalio/workflow, workflows/ and ' +
        'src/common/. Move a pure helper it needs into src/common/; reach activities through proxyActivities.',
      from: { path: '^workflows/', pathNot: TRACING_INTERCEPTORS },
      to: {
        pathNot: '^(workflows|src/common)/|(^|/)node_modules/@temporalio/workflow/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'tracing-interceptors-import-only-sandbox-safe-modules',
      severity: 'error',
      comment:
        'The workflow-side tracing interceptors may also import the workflow part of Temporal\'s OpenTelemetry ' +
        'interceptors and the OpenTelemetry packages it bundles for the sandbox, and nothing else beyond what every ' +
        'workflow module may import.',
      from: { path: TRACING_INTERCEPTORS },
      to: {
        pathNot:
          '^(workflows|src/common)/|(^|/)node_modules/@temporalio/workflow/|' +
          '(^|/)node_modules/@temporalio/interceptors-opentelemetry-v2/lib/workflow/|(^|/)node_modules/@opentelemetry/',
      },
    },
    {
      name: 'workflows-import-types-only-from-activities',
      severity: 'error',
      comment:
        'Beyond @temporalio/workflow, workflows/ and src/common/, workflow code imports only types, and only from ' +
        'activities/ (to type proxyActivities). Put a shape it needs from elsewhere into src/common/ or src/contracts/ ' +
        'and import it from there.',
      from: { path: '^workflows/', pathNot: TRACING_INTERCEPTORS },
      to: {
        pathNot: '^(workflows|src/common|activities)/|(^|/)node_modules/@temporalio/workflow/',
        dependencyTypes: ['type-only'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    // type-only imports are in the graph, so a circle through them is reported too
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
