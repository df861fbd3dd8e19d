/**
 * The codec endpoint's wire shape (`POST /codec/decode`, `POST /codec/encode`), as the Temporal Web
 * UI and the `temporal` CLI (`--codec-endpoint`) send and expect it: Temporal Payloads in proto3
 * JSON, every bytes field (the metadata's values, the data) in base64.
 */
import { z } from 'zod';

const Base64Schema = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

export const CodecPayloadSchema = z.object({
  metadata: z.record(z.string(), Base64Schema).optional(),
  data: Base64Schema.optional(),
}).meta({ id: 'CodecPayload', description: 'a Temporal Payload in proto3 JSON (bytes in base64)' });

export const CodecPayloadsSchema = z.object({
  payloads: z.array(CodecPayloadSchema).max(10_000),
}).meta({ id: 'CodecPayloads' });

export type CodecPayloadJson = z.infer<typeof CodecPayloadSchema>;
