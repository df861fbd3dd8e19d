/**
 * flowgate's Temporal failure converter: Temporal's default, with a failure's message and stack
 * trace moved out of the failure's clear fields into its `encodedAttributes`, a payload, which the
 * run-data codec seals like every other (src/crypto/payload-codec.ts). Temporal then keeps
 * `Encoded failure` and an empty stack trace in clear. Decoding puts them back; a failure written
 * in clear (runs from before this converter) decodes as it always did.
 *
 * The SDK loads it by path (`failureConverterPath`, src/crypto/run-data-converter.ts): in the
 * workflow sandbox (bundled with the workflows, temporal/worker.ts), and in the worker's and the
 * clients' processes. It must stay sandbox-safe.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
