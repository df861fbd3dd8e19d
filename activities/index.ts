/**
 * The activities of flowgate, made by a factory over their dependencies, so tests can pass
 * their own blob store and settings. The worker wiring is the only place that joins these to the
 * workflows; workflows import the `Activities` type only.
 */
import type { Config } from '../src/config/config';
import type { Registry, UsageCall } from '../src/registry';
import type { MonthTotals } from '../src/common/agent-usage';
import type { PriceTable } from '../src/llm/prices';
import type { TriggerResolution } from '../src/runs/trigger-types';
import { createAgentInvocationActivities, type ToolCatalogView } from './agent-invocation';
import { createAlertActivities } from './alerts';
import type { AlertDeliveries } from '../src/runs/alert-deliveries';
import { createCallAgentTool } from './agent-tool-call';
import { createPostCallback, type CallbackDependencies } from './callback';
import { createCodeAgentTaskActivities } from './codeagent-task';
import { createDurableToolCallActivities, type DurableCallObserver } from './durable-tool-call';
import { createRenderValue } from './render-value';
import { createResolveTrigger } from './resolve-trigger';
import { createRetentionActivities } from './retention';
import { createSlotActivities, type SlotDependencies } from './slots';
import { createStartShapedRun } from './shaped-run';
import { createRunBatchActivities } from './run-batch';
import type { RunBatches } from '../src/runs/run-batch';
import { createReleaseActivities } from './release-held';
import type { RunHolds } from '../src/runs/run-holds';
import type { ShapedRunStarter } from '../src/triggers/shaping/shaped-runs';
import { createRecordComposite, createRecordStep, createRunStep, type RunStepDependencies } from './run-step';

export type ActivityDependencies = RunStepDependencies & Omit<CallbackDependencies, 'allowPrivateNetwork'> & {
  registry: Registry;
  /** the trigger service the gateway uses too: `trigger` steps resolve and prepare their run through it */
  triggers: TriggerResolution;
  /** how deep `trigger` steps may chain runs (a guard against cycles) */
  maxChainDepth: number;
  /** the model agents use; unset fields make agent invocations fail with a message naming them */
  llm: Readonly<Config['llm']>;
  /** the tool catalog agents list their tools from (the dispatcher) */
  catalog?: ToolCatalogView;
  /** FLOWGATE_MODEL_PRICES: turns agents' token usage into cost */
  modelPrices?: PriceTable;
  /** told of every model call's usage (the worker's metrics) */
  usageMeter?: (call: UsageCall, month: MonthTotals) => void;
  /** what the retention sweep deletes; unset or disabled: the sweep's activities delete nothing */
  retention?: Readonly<Config['retention']>;
  /** concurrency limits' semaphores (unset: a run with limits fails its acquireSlot activity, naming this) */
  slots?: SlotDependencies;
  /** starts the runs of debounced and batched triggers' windows (unset: their startShapedRun activity fails and is retried) */
  shapedRuns?: ShapedRunStarter;
  /** alert deliveries (unset: the alert evaluator's activities fail and are retried) */
  alerts?: AlertDeliveries;
  /** records and counts durable tool calls' attempts (unset: they are neither audited nor counted) */
  durableCalls?: DurableCallObserver;
  /** bulk actions on runs (the batch workflow's activities; unset: they fail and are retried) */
  batches?: Pick<RunBatches, 'select' | 'apply'>;
  /** the release of paused workflows' and triggers' runs (unset: the release's activity fails and is retried) */
  holds?: Pick<RunHolds, 'sweep'>;
};

export function createActivities(deps: ActivityDependencies) {
  return {
    runStep: createRunStep(deps),
    recordStep: createRecordStep(deps),
    recordComposite: createRecordComposite(deps),
    resolveTrigger: createResolveTrigger(deps),
    renderValue: createRenderValue(deps),
    ...createAgentInvocationActivities({
      registry: deps.registry, blobs: deps.blobs, llm: deps.llm, catalog: deps.catalog, prices: deps.modelPrices, meter: deps.usageMeter,
    }),
    callAgentTool: createCallAgentTool(deps),
    postCallback: createPostCallback(deps),
    ...createRetentionActivities(deps),
    ...createCodeAgentTaskActivities({ tools: deps.tools }),
    ...createDurableToolCallActivities({ tools: deps.tools, durableCalls: deps.durableCalls }),
    ...createSlotActivities(deps.slots),
    startShapedRun: createStartShapedRun(deps),
    ...createAlertActivities(deps.alerts),
    ...createRunBatchActivities(deps),
    ...createReleaseActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
