/**
 * Verified and shaped triggers on the command line (docs/webhooks.md, docs/cli.md): the options of
 * `triggers create` that make `verify`, `debounce` and `batch`, and `triggers deliveries` and
 * `triggers secrets`. A signing secret is read from an environment variable (`--secret-env`) or a
 * file (`--secret-file`), never from the command line (where `ps` and the shell's history would
 * show it), and is never printed: the API answers with how many secrets a trigger holds.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { contextOf } from './context';
import { CliError, EXIT } from './errors';
import { collect } from './inputs';
import { printJson, show } from './output';

type Row = Record<string, unknown>;
const enc = encodeURIComponent;

export const CLI_VERIFY_PRESETS = ['github', 'stripe', 'slack', 'standard-webhooks', 'hmac'] as const;

export interface WebhookCreateOptions {
  verify?: string;
  secretEnv: string[];
  secretFile: string[];
  events?: string;
  tolerance?: string;
  deliveryIdHeader?: string;
  signatureHeader?: string;
  algorithm?: string;
  encoding?: string;
  prefix?: string;
  timestampHeader?: string;
  debounce?: string;
  batch?: string;
  maxWait?: string;
  collect?: string;
  key?: string;
}

/** Adds the options of a verified or shaped trigger to `triggers create`. */
export function withWebhookOptions(command: Command): Command {
  return command
    .option('--verify <preset>', `verify calls by the sender's signature instead of an API key: ${CLI_VERIFY_PRESETS.join(', ')}`)
    .option('--secret-env <VAR>', 'the signing secret is the value of this environment variable (twice for two secrets)', collect, [])
    .option('--secret-file <path>', 'the signing secret is this file\'s content, without a trailing newline (- for stdin)', collect, [])
    .option('--events <names>', 'github: the X-GitHub-Event values that start runs, comma-separated (others are answered 200 without a run)')
    .option('--tolerance <seconds>', 'stripe, slack, standard-webhooks, hmac with a timestamp header: the accepted clock distance')
    .option('--delivery-id-header <name>', 'a header naming the delivery (the run\'s idempotency key), instead of the preset\'s own')
    .option('--signature-header <name>', 'hmac: the header carrying the signature')
    .option('--algorithm <name>', 'hmac: sha1, sha256 (default) or sha512')
    .option('--encoding <name>', 'hmac: hex (default) or base64')
    .option('--prefix <text>', 'hmac: text before the signature in its header (e.g. sha256=)')
    .option('--timestamp-header <name>', 'hmac: a header with the Unix time of signing (then `<timestamp>.<body>` is signed)')
    .option('--debounce <quietSeconds>', 'one run per burst: once no call came for this many seconds')
    .option('--batch <size>', 'one run per this many calls')
    .option('--max-wait <seconds>', 'debounce, batch: close a window this long after its first call at the latest (default: debounce 10 times the quiet period, batch 60)')
    .option('--collect <which>', 'debounce: all (default) or last')
    .option('--key <expression>', 'debounce, batch: a JSONata expression over {inputs, headers}; each value is a window of its own');
}

function seconds(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new CliError(`${name} must be a positive number of seconds, got ${JSON.stringify(text)}`, EXIT.USAGE);
  return value;
}

function integer(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new CliError(`${name} must be a positive whole number, got ${JSON.stringify(text)}`, EXIT.USAGE);
  return value;
}

/** The secrets named by --secret-env and --secret-file, in that order; a message naming the variable or file, never a value. */
export function readSecrets(o: Pick<WebhookCreateOptions, 'secretEnv' | 'secretFile'>): string[] {
  const secrets: string[] = [];
  for (const name of o.secretEnv) {
    const value = process.env[name];
    if (value === undefined || value === '') throw new CliError(`--secret-env ${name}: the environment variable is not set or empty`, EXIT.USAGE);
    secrets.push(value);
  }
  for (const file of o.secretFile) {
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (err) {
      throw new CliError(`--secret-file ${file}: cannot read it (${err instanceof Error && 'code' in err ? String(err.code) : 'error'})`, EXIT.USAGE);
    }
    const value = text.replace(/\r?\n$/, '');
    if (value === '') throw new CliError(`--secret-file ${file}: the file is empty`, EXIT.USAGE);
    secrets.push(value);
  }
  if (secrets.length === 0) throw new CliError('give the signing secret with --secret-env VAR or --secret-file PATH (never on the command line)', EXIT.USAGE);
  if (secrets.length > 2) throw new CliError('at most two secrets (the new and the old one during a rotation)', EXIT.USAGE);
  return secrets;
}

/** The `verify`, `debounce` and `batch` fields of POST /api/v1/triggers that the options name (none: {}). */
export function webhookFields(o: WebhookCreateOptions): Row {
  const fields: Row = {};
  const hmacOnly = { signatureHeader: o.signatureHeader, algorithm: o.algorithm, encoding: o.encoding, prefix: o.prefix, timestampHeader: o.timestampHeader };
  if (o.verify === undefined) {
    const stray = [...Object.entries(hmacOnly).filter(([, v]) => v !== undefined).map(([k]) => k), ...(o.events ? ['events'] : []), ...(o.secretEnv.length || o.secretFile.length ? ['secret'] : [])];
    if (stray.length > 0) throw new CliError(`--${stray[0]?.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --verify`, EXIT.USAGE);
  } else {
    const preset = o.verify;
    if (!CLI_VERIFY_PRESETS.some((p) => p === preset)) throw new CliError(`--verify must be one of ${CLI_VERIFY_PRESETS.join(', ')}, got ${JSON.stringify(preset)}`, EXIT.USAGE);
    const verify: Row = { preset, secrets: readSecrets(o) };
    if (o.events !== undefined) {
      if (preset !== 'github') throw new CliError('--events is for --verify github', EXIT.USAGE);
      verify.events = o.events.split(',').map((e) => e.trim()).filter((e) => e !== '');
    }
    if (o.tolerance !== undefined) {
      if (preset === 'github') throw new CliError('--tolerance does not apply to --verify github (GitHub signs no timestamp)', EXIT.USAGE);
      verify.toleranceSeconds = integer('--tolerance', o.tolerance);
    }
    if (o.deliveryIdHeader !== undefined) verify.deliveryIdHeader = o.deliveryIdHeader;
    if (preset === 'hmac') {
      if (o.signatureHeader === undefined) throw new CliError('--verify hmac needs --signature-header NAME', EXIT.USAGE);
      verify.header = o.signatureHeader;
      if (o.algorithm !== undefined) verify.algorithm = o.algorithm;
      if (o.encoding !== undefined) verify.encoding = o.encoding;
      if (o.prefix !== undefined) verify.prefix = o.prefix;
      if (o.timestampHeader !== undefined) verify.timestampHeader = o.timestampHeader;
    } else {
      const stray = Object.entries(hmacOnly).find(([, v]) => v !== undefined);
      if (stray) throw new CliError(`--${stray[0].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for --verify hmac`, EXIT.USAGE);
    }
    fields.verify = verify;
  }
  if (o.debounce !== undefined && o.batch !== undefined) throw new CliError('a trigger debounces or batches, not both', EXIT.USAGE);
  const key = o.key === undefined ? {} : { key: o.key };
  if (o.debounce !== undefined) {
    const quietSeconds = seconds('--debounce', o.debounce);
    const maxWaitSeconds = o.maxWait === undefined ? Math.min(quietSeconds * 10, 86_400) : seconds('--max-wait', o.maxWait);
    fields.debounce = { ...key, quietSeconds, maxWaitSeconds, ...(o.collect === undefined ? {} : { collect: o.collect }) };
  } else if (o.batch !== undefined) {
    if (o.collect !== undefined) throw new CliError('--collect is for --debounce', EXIT.USAGE);
    fields.batch = { ...key, size: integer('--batch', o.batch), maxWaitSeconds: o.maxWait === undefined ? 60 : seconds('--max-wait', o.maxWait) };
  } else if (o.maxWait !== undefined || o.collect !== undefined || o.key !== undefined) {
    throw new CliError('--max-wait, --collect and --key need --debounce or --batch', EXIT.USAGE);
  }
  return fields;
}

/** `triggers deliveries` and `triggers secrets`. */
export function triggerWebhookCommands(tr: Command): void {
  tr.command('deliveries <id>').description('the trigger\'s last deliveries, newest first: verified, queued, answered or refused (with the reason)')
    .option('--limit <n>', 'how many (1 to 50; default 20)', (v) => Number(v))
    .action(async (id: string, o: { limit?: number }, cmd: Command) => {
      const c = contextOf(cmd);
      const body = await c.client.get<{ deliveries: Row[] }>(`/api/v1/triggers/${enc(id)}/deliveries${o.limit === undefined ? '' : `?limit=${enc(String(o.limit))}`}`);
      show(c.json, body, body.deliveries, ['at', 'outcome', 'reason', 'deliveryId', 'runId']);
    });
  tr.command('secrets <id>').description('replace a verified trigger\'s signing secrets: the new and the old one during a rotation, later the new one alone')
    .option('--secret-env <VAR>', 'a secret is the value of this environment variable (twice for two)', collect, [])
    .option('--secret-file <path>', 'a secret is this file\'s content, without a trailing newline (- for stdin)', collect, [])
    .action(async (id: string, o: { secretEnv: string[]; secretFile: string[] }, cmd: Command) => {
      const c = contextOf(cmd);
      const secrets = readSecrets(o);
      const body = (await c.client.request<Row>('PUT', `/api/v1/triggers/${enc(id)}/verify/secrets`, { body: { secrets } })).body;
      if (c.json) printJson(body);
      else process.stdout.write(`${id} now holds ${String(body.secrets)} secret(s)\n`);
    });
}
