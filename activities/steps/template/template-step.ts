import type { TemplateStep } from './schema';
import { interpolate, type InterpolationContext } from '../../../src/common/interpolate';
import type { StepExecution } from '../step-execution';

export async function runTemplateStep(step: TemplateStep, context: InterpolationContext): Promise<StepExecution> {
  const result = interpolate(step.template, context);
  return {
    status: 'COMPLETE',
    result,
    resultType: step.format,
    exitCode: 0,
    stdout: `rendered ${step.format} template: ${result.length} characters\n`,
  };
}
