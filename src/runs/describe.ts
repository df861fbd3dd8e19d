/** Temporal's describe of a workflow, or undefined when Temporal does not know it. */
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';

export async function describeIfKnown(handle: { describe(): Promise<WorkflowExecutionDescription> }): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}
