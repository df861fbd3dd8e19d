/**
 * Temporal's OpenTelemetry workflow interceptors (`@temporalio/interceptors-opentelemetry-v2`, on
 * OpenTelemetry 2), in the bundle of a worker that traces (temporal/worker.ts), gated like every
 * other history-changing revision (workflows/run/features.ts).
 *
 * What the switch from the OpenTelemetry 1 package changes in a run: that package drew its span and
 * trace IDs from the run's seeded random numbers (one `Math.random()` per hex digit, OpenTelemetry
 * 1's browser RandomIdGenerator, which is what the workflow bundle holds), so every random number
 * the run drew afterwards, `$random()` in an expression or a pre-derived-child-ids run's child
 * IDs, depended on the spans before it; the v2 package draws them from a random stream of their
 * own and leaves the run's numbers alone (tracing no longer changes what a run does). A run
 * started before the switch must therefore keep drawing its span IDs as it did, or its replay
 * takes other branches than its history. So:
 * - runs at level OTEL2_SPAN_IDS_LEVEL and above (runAutomation, runForEachChunk) take the v2
 *   package's IDs;
 * - runs below it, and those started before levels existed, draw them from the run's random
 *   numbers exactly as the OpenTelemetry 1 package did;
 * - the other workflow types (agents, callbacks, sweeps, schedules) draw no random numbers, so the
 *   source of their span IDs cannot change their commands: they take the v2 package's.
 * Every traced run also records the SDK flags the v1 package recorded at its start, so a worker
 * still on the v1 package that takes the run over during a rolling update replays it without the
 * extra yields it would add to a history lacking them.
 */
// First: the package's polyfill of `performance` and its sandbox runtime, which OpenTelemetry's
// browser build (the one the workflow bundle holds) reads as its modules load.
import '@temporalio/interceptors-opentelemetry-v2/lib/workflow/performance-polyfill';
import '@temporalio/interceptors-opentelemetry-v2/lib/workflow/runtime';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry-v2/lib/workflow';
import { DeterministicIdGenerator } from '@temporalio/interceptors-opentelemetry-v2/lib/workflow/id-generator';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry-v2/lib/workflow/span-exporter';
import { fieldOf } from '../../src/common/narrow';

/** The engine level at which runs take the v2 package's span IDs (src/common/run-types.ts, ENGINE_LEVEL). */
export const OTEL2_SPAN_IDS_LEVEL = 3;

/** Workflow types whose input is a RunInput with an engine level, and whose code draws random numbers. */
const LEVELLED_TYPES = new Set(['runAutomation', 'runForEachChunk']);

/** Whether this run draws span IDs from its own random numbers (set at its start; module state is per run). */
let idsFromRunRandom = false;

function startsWithV1Ids(args: unknown[]): boolean {
  if (!LEVELLED_TYPES.has(workflowInfo().workflowType)) return false;
  const engine = fieldOf(args[0], 'engine');
  return !(typeof engine === 'number' && engine >= OTEL2_SPAN_IDS_LEVEL);
}

/** `digits` hex digits, one `Math.random()` each, as OpenTelemetry 1's browser RandomIdGenerator drew them. */
function v1Hex(digits: number): string {
  let hex = '';
  for (let i = 0; i < digits; i++) hex += Math.floor(Math.random() * 16).toString(16);
  return hex;
}

class GatedIdGenerator implements IdGenerator {
  private readonly own = new DeterministicIdGenerator();

  generateTraceId(): string {
    return idsFromRunRandom ? v1Hex(32) : this.own.generateTraceId();
  }

  generateSpanId(): string {
    return idsFromRunRandom ? v1Hex(16) : this.own.generateSpanId();
  }
}

let tracer: ReturnType<BasicTracerProvider['getTracer']> | undefined;

/** The package's tracer (same name, same exporter through the worker's `exporter` sink), with gated IDs. */
function gatedTracer(): ReturnType<BasicTracerProvider['getTracer']> {
  tracer ??= new BasicTracerProvider({ idGenerator: new GatedIdGenerator(), spanProcessors: [new SimpleSpanProcessor(new SpanExporter())] })
    .getTracer('@temporalio/interceptor-workflow');
  return tracer;
}

/** The flags the v1 package asked for (and so recorded) in a new run; asking again on replay changes nothing. */
const V1_FLAGS = [
  SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields,
  SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals,
  SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities,
  SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods,
];

class InboundInterceptor extends OpenTelemetryInboundInterceptor {
  protected override readonly tracer = gatedTracer();

  override execute(...[input, next]: Parameters<OpenTelemetryInboundInterceptor['execute']>): Promise<unknown> {
    idsFromRunRandom = startsWithV1Ids(input.args);
    const activator = getActivator();
    for (const flag of V1_FLAGS) activator.hasFlag(flag);
    return super.execute(input, next);
  }
}

class OutboundInterceptor extends OpenTelemetryOutboundInterceptor {
  protected override readonly tracer = gatedTracer();
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new InboundInterceptor()],
  outbound: [new OutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
