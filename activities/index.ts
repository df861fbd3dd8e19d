/**
 * The activities of flowgate, made by a factory over their dependencies, so tests can pass
 * their own blob store and settings. The worker wiring is the only place that joins these to the
 * workflows; workflows import the `Activities` type only.
 */
import type { Registry } from '../src/registry';
import { createRenderValue } from './render-value';
import { createResolveTrigger } from './resolve-trigger';
import { createRecordStep, createRunStep, type StepDependencies } from './run-step';

export type ActivityDependencies = StepDependencies & {
  registry: Registry;
  /** how deep `trigger` steps may chain runs (a guard against cycles) */
  maxChainDepth: number;
};

export function createActivities(deps: ActivityDependencies) {
  return {
    runStep: createRunStep(deps),
    recordStep: createRecordStep(deps),
    resolveTrigger: createResolveTrigger(deps),
    renderValue: createRenderValue(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
