/**
 * What `POST /api/v1/triggers` accepts for a verified or shaped trigger (issue 51,
 * docs/webhooks.md): `verify: {preset, secrets, ...options}`, `debounce` and `batch`. The
 * secrets are taken here and sealed at once (secrets.ts); what the registry keeps of `verify`
 * (TriggerVerify) is the preset and its options, never a secret.
 */
import jsonata from 'jsonata';
import { z } from 'zod';

export const VERIFY_PRESETS = ['github', 'stripe', 'slack', 'standard-webhooks', 'hmac'] as const;
export type VerifyPreset = (typeof VERIFY_PRESETS)[number];

/** A header name as HTTP allows it (a token), compared case-insensitively. */
const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'must be an HTTP header name');
const Secret = z.string().min(8, 'must be at least 8 characters').max(1000);
/** One secret, or two while a rotation is under way (either signs). */
export const SecretsSchema = z.array(Secret).min(1).max(2)
  .meta({ description: 'the signing secret, or two during a rotation (either verifies); stored sealed and never shown again' });

const Tolerance = z.number().int().min(1).max(86_400);
/** A header naming the delivery, whose value becomes the run's idempotency key (overrides the preset's own). */
const DeliveryIdHeader = HeaderName.optional().meta({ description: 'a header whose value names the delivery and becomes the run\'s idempotency key (overrides the preset\'s own delivery ID)' });

const GitHubOptions = z.object({
  preset: z.literal('github'),
  secrets: SecretsSchema,
  /** X-GitHub-Event values that start runs; others are answered 200 with no run. Unset: all */
  events: z.array(z.string().regex(/^[a-z_]{1,64}$/, 'must be a GitHub event name')).min(1).max(100).optional(),
  deliveryIdHeader: DeliveryIdHeader,
}).strict();

const StripeOptions = z.object({
  preset: z.literal('stripe'),
  secrets: SecretsSchema,
  /** how far the `t=` of Stripe-Signature may be from the gateway's clock (Stripe's libraries: 300) */
  toleranceSeconds: Tolerance.default(300),
  deliveryIdHeader: DeliveryIdHeader,
}).strict();

const SlackOptions = z.object({
  preset: z.literal('slack'),
  secrets: SecretsSchema,
  /** X-Slack-Request-Timestamp's window (Slack: five minutes) */
  toleranceSeconds: Tolerance.default(300),
  deliveryIdHeader: DeliveryIdHeader,
}).strict();

const StandardWebhooksOptions = z.object({
  preset: z.literal('standard-webhooks'),
  secrets: z.array(Secret.regex(/^(whsec_)?[A-Za-z0-9+/=]+$/, 'must be a whsec_ secret (base64 after the prefix)')).min(1).max(2),
  toleranceSeconds: Tolerance.default(300),
  deliveryIdHeader: DeliveryIdHeader,
}).strict();

const HmacOptions = z.object({
  preset: z.literal('hmac'),
  secrets: SecretsSchema,
  /** the header carrying the signature */
  header: HeaderName,
  algorithm: z.enum(['sha1', 'sha256', 'sha512']).default('sha256'),
  encoding: z.enum(['hex', 'base64']).default('hex'),
  /** text before the signature in the header (`sha256=`), removed before comparing */
  prefix: z.string().max(40).optional(),
  /** a header with the Unix time of signing: then the signed bytes are `<timestamp>.<body>` and stale ones are refused */
  timestampHeader: HeaderName.optional(),
  toleranceSeconds: Tolerance.default(300),
  deliveryIdHeader: DeliveryIdHeader,
}).strict();

/** `verify` on POST /api/v1/triggers. */
export const VerifySchema = z.discriminatedUnion('preset', [GitHubOptions, StripeOptions, SlackOptions, StandardWebhooksOptions, HmacOptions])
  .meta({ description: 'verify calls by the sender\'s signature (a preset) instead of an API key: the trigger is then called at /ext/triggers/{id} without X-API-KEY' });
export type VerifyInput = z.infer<typeof VerifySchema>;

/** `verify` on PATCH /api/v1/triggers/{id}: as on create, but without `secrets` the trigger keeps its own. */
export const VerifyChangeSchema = z.discriminatedUnion('preset', [
  GitHubOptions.partial({ secrets: true }), StripeOptions.partial({ secrets: true }), SlackOptions.partial({ secrets: true }),
  StandardWebhooksOptions.partial({ secrets: true }), HmacOptions.partial({ secrets: true }),
]).meta({ description: 'the preset and its options; `secrets` replaces the held ones, and without it a verified trigger keeps its own' });
export type VerifyChange = z.infer<typeof VerifyChangeSchema>;

/** What the registry keeps of `verify` (and the trigger's body shows): everything but the secrets. */
export type TriggerVerify = DistributiveOmit<VerifyInput, 'secrets'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function verifyOptions(input: VerifyInput): TriggerVerify {
  const { secrets: _secrets, ...options } = input;
  return options;
}

/** The stored options, checked again when read (a row written by a later version may carry more). */
export const StoredVerifySchema = z.discriminatedUnion('preset', [
  GitHubOptions.omit({ secrets: true }), StripeOptions.omit({ secrets: true }), SlackOptions.omit({ secrets: true }),
  StandardWebhooksOptions.omit({ secrets: true }), HmacOptions.omit({ secrets: true }),
]);

function compiles(expression: string): boolean {
  try {
    jsonata(expression);
    return true;
  } catch {
    return false;
  }
}

const KeyExpression = z.string().min(1).max(1000).refine(compiles, { message: 'must be a JSONata expression that parses' })
  .meta({ description: 'a JSONata expression over {inputs, headers} (header names in lower case); each value is a window of its own. Unset: one window per trigger' });
const Seconds = z.number().min(0.1).max(86_400);

export const DebounceSchema = z.object({
  key: KeyExpression.optional(),
  quietSeconds: Seconds,
  maxWaitSeconds: Seconds,
  collect: z.enum(['all', 'last']).default('all'),
}).strict().refine((d) => d.maxWaitSeconds >= d.quietSeconds, { message: 'maxWaitSeconds must be at least quietSeconds', path: ['maxWaitSeconds'] })
  .meta({ description: 'one run per burst: once no call came for quietSeconds (or maxWaitSeconds after the first), with the collected events in order' });

export const BatchSchema = z.object({
  key: KeyExpression.optional(),
  size: z.number().int().min(1).max(1000),
  maxWaitSeconds: Seconds,
}).strict().meta({ description: 'one run per `size` calls, or maxWaitSeconds after the first of fewer, with the events in order' });
