/**
 * The import boundaries `npm run lint` holds (issue 29; docs/architecture.md): no import circle,
 * type-only imports included, and the layer rules below. Each rule's comment is what the report
 * prints next to a violation, so it says what to do instead.
 * Run it alone: scripts/with-node.sh auto npx depcruise --config .dependency-cruiser.cjs src workflows activities temporal test
 */
/** Loaded into the workflow bundle only by a worker that traces (temporal/worker.ts). */
const TRACING_INTERCEPTORS = '^workflows/run/tracing-interceptors\\.ts$';

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
    {
      name: 'only-http-and-app-import-http',
      severity: 'error',
      comment:
        'src/http/ is the top layer: only src/http/ itself, the composition root (src/app/) and tests import it. Move what ' +
        'a lower layer needs (an error type, a body shape, a helper) below it, e.g. into src/contracts/ or the module that ' +
        'owns the concept, and let the HTTP layer map it to a status.',
      from: { pathNot: '^(src/http|src/app|test)/' },
      to: { path: '^src/http/' },
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
