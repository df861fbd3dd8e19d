/** The ways a task request fails, shared by the generic task module and the task kinds; the endpoint maps each to a JSON-RPC error. */

/** The task id names no task of the caller's organization (missing, another organization's, or past its ttl). */
export class TaskNotFoundError extends Error {
  override readonly name = 'TaskNotFoundError';
  constructor(taskId: string) {
    super(`no task ${taskId}`);
  }
}

/** The task is closed and cannot be cancelled. */
export class TaskTerminalError extends Error {
  override readonly name = 'TaskTerminalError';
}

/** The task is still open after the wait `tasks/result` allows. */
export class TaskNotReadyError extends Error {
  override readonly name = 'TaskNotReadyError';
}

/** A tasks/list cursor this gateway did not hand out. */
export class TaskCursorError extends Error {
  override readonly name = 'TaskCursorError';
}
