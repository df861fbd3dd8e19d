/**
 * The activities of flowgate, made by a factory over their dependencies, so tests can pass
 * their own blob store and settings. The worker wiring is the only place that joins these to the
 * workflows; workflows import the `Activities` type only.
 */
import type { Config } from '../src/config/config';
import type { Registry } from '../src/registry';
import { createAgentInvocationActivities, type ToolCatalogView } from './agent-invocation';
import { createCallAgentTool } from './agent-tool-call';
import { createPostCallback, type CallbackDependencies } from './callback';
import { createCodeAgentTaskActivities } from './codeagent-task';
import { createRenderValue } from './render-value';
import { createResolveTrigger } from './resolve-trigger';
import { createRetentionActivities } from './retention';
import { createRecordComposite, createRecordStep, createRunStep, type StepDependencies } from './run-step';

export type ActivityDependencies = StepDependencies & Omit<CallbackDependencies, 'allowPrivateNetwork'> & {
  registry: Registry;
  /** how deep `trigger` steps may chain runs (a guard against cycles) */
  maxChainDepth: number;
  /** the model agents use; unset fields make agent invocations fail with a message naming them */
  llm?: Readonly<Config['llm']>;
  /** the tool catalog agents list their tools from (the dispatcher) */
  catalog?: ToolCatalogView;
  /** what the retention sweep deletes; unset or disabled: the sweep's activities delete nothing */
  retention?: Readonly<Config['retention']>;
};

export function createActivities(deps: ActivityDependencies) {
  return {
    runStep: createRunStep(deps),
    recordStep: createRecordStep(deps),
    recordComposite: createRecordComposite(deps),
    resolveTrigger: createResolveTrigger(deps),
    renderValue: createRenderValue(deps),
    ...createAgentInvocationActivities({ registry: deps.registry, blobs: deps.blobs, llm: deps.llm ?? { timeoutMs: 120_000 }, catalog: deps.catalog }),
    callAgentTool: createCallAgentTool(deps),
    postCallback: createPostCallback(deps),
    ...createRetentionActivities(deps),
    ...createCodeAgentTaskActivities({ tools: deps.tools }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
