/**
 * A workflow whose one code step returns the inputs its run saw, as JSON: lets a trigger test
 * compare what it sent with what the run got.
 */

export const ECHO_STEP = { name: 'Echo', type: 'code', source: 'return JSON.stringify(inputs)' };

export const echoInputsWorkflow = { name: 'echo-inputs', steps: [ECHO_STEP] };

/** The answer to a synchronous call of an echo run; `results[0].result.result` is what the run saw. */
export interface EchoSyncBody<Inputs = unknown> {
  id: string;
  status: string;
  inputs: Inputs;
  results: { result: { result: string } }[];
}

/** One uploaded file as a run's inputs describe it (`inputs.attachments[]`). */
export interface Attachment {
  filename: string;
  contentType: string;
  size: number;
  url: string;
}

/** The answer to a synchronous multipart call of an echo run. */
export type AttachmentsSyncBody = EchoSyncBody<Record<string, unknown> & { attachments: Attachment[] }>;
