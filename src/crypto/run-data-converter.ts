/**
 * The data converter of every Temporal client and worker flowgate makes: the run-data codec
 * (payload-codec.ts) on every payload, and the failure converter that makes failures' messages and
 * stack traces payloads too (src/common/failure-converter.ts), so that they are sealed as well.
 */
import path from 'node:path';
import type { DataConverter, PayloadCodec } from '@temporalio/common';

/** The compiled failure converter module, which the SDK loads by path (in the workflow bundle too). */
export const FAILURE_CONVERTER_PATH = path.join(__dirname, '..', 'common', 'failure-converter.js');

export function runDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}

