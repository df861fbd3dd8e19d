/**
 * The `mail` application server: send over SMTP (nodemailer), list folders and messages and read
 * a message over IMAP (imapflow), with the credentials of a `mail` connection (`PCID`).
 *
 * Connection hosts are the customer's, so they pass the same private-network guard as outbound
 * HTTP: the name is resolved here, every answer judged, and the socket opened to the checked
 * address (TLS still verifies the certificate against the name). Attachments come from blob
 * references: a signed flowgate file link (what a workflow's inputs and results hand out) or a
 * blob key of the caller's own organization, or inline content.
 */
import { createHash } from 'node:crypto';
import dns from 'node:dns';
import net from 'node:net';
import { ImapFlow, type ImapFlowOptions, type MessageStructureObject } from 'imapflow';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import type { BlobStore } from '../../blob-store';
import { assertAddressAllowed } from '../../net/outbound';
import { decodeFileKey, type SignedUrlSigner } from '../../signed-urls';
import { ToolCallError } from '../dispatcher';
import { ToolFailure, type ToolConnection, type ToolDefinition, type ToolServer } from '../types';

export const MAIL_SERVER_NAME = 'mail';
export const MAIL_APPLICATION = 'mail';

const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
const MAX_TEXT_CHARS = 1_000_000;
const NETWORK_TIMEOUT_MS = 20_000;

const EndpointSchema = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  /** tls: implicit TLS (465, 993); starttls: upgrade required; none: plain text (test and internal servers only) */
  security: z.enum(['tls', 'starttls', 'none']).optional(),
  user: z.string().min(1).max(500).optional(),
  password: z.string().max(2000).optional(),
  /** false accepts self-signed certificates */
  rejectUnauthorized: z.boolean().default(true),
}).strict();

export const MailCredentialsSchema = z.object({
  from: z.string().min(3).max(500),
  smtp: EndpointSchema.optional(),
  imap: EndpointSchema.optional(),
}).strict().refine((c) => c.smtp !== undefined || c.imap !== undefined, { message: 'needs smtp, imap or both' });
type MailCredentials = z.infer<typeof MailCredentialsSchema>;
type Endpoint = z.infer<typeof EndpointSchema>;

export interface MailServerDeps {
  blobs: BlobStore;
  /** verifies signed file links used as attachment references */
  signer: Pick<SignedUrlSigner, 'verify'>;
  allowPrivateNetwork: boolean;
}

const pcid = { type: 'string', minLength: 1, description: 'the mail connection to use (its PCID)' } as const;
const folder = { type: 'string', minLength: 1, maxLength: 500, description: 'the folder (mailbox), default INBOX' } as const;
const addresses = {
  anyOf: [{ type: 'string', minLength: 3 }, { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 3 } }],
} as const;

export function mailServer(deps: MailServerDeps): ToolServer {
  const tools: ToolDefinition[] = [
    {
      name: 'mail_send_message',
      description: 'Send an email message over SMTP, with optional attachments (signed flowgate file links, blob keys, or inline content).',
      timeoutMs: 60_000,
      inputSchema: {
        type: 'object',
        properties: {
          PCID: pcid,
          to: { ...addresses, description: 'recipient address(es)' },
          cc: addresses,
          bcc: addresses,
          replyTo: { type: 'string', minLength: 3 },
          subject: { type: 'string', maxLength: 1000 },
          text: { type: 'string', maxLength: MAX_TEXT_CHARS, description: 'plain-text body' },
          html: { type: 'string', maxLength: MAX_TEXT_CHARS, description: 'HTML body' },
          attachments: {
            type: 'array',
            maxItems: 20,
            items: {
              type: 'object',
              properties: {
                url: { type: 'string', description: 'a signed flowgate file link (from run results or trigger attachments)' },
                key: { type: 'string', description: 'a blob key of this organization' },
                content: { type: 'string', description: 'inline text content' },
                contentBase64: { type: 'string', description: 'inline binary content, base64' },
                filename: { type: 'string', minLength: 1, maxLength: 255 },
                contentType: { type: 'string', minLength: 3, maxLength: 255 },
              },
              additionalProperties: false,
            },
          },
        },
        required: ['PCID', 'to', 'subject'],
        additionalProperties: false,
      },
      async handler(args, context) {
        const credentials = credentialsOf(context.connection);
        if (!credentials.smtp) throw new ToolCallError('CONNECTION_REFUSED', `connection ${context.connection?.id} has no SMTP settings`);
        const attachments = await Promise.all(((args.attachments as AttachmentRef[] | undefined) ?? []).map((ref, i) => resolveAttachment(ref, i, context.orgId, deps)));
        const total = attachments.reduce((sum, a) => sum + a.content.length, 0);
        if (total > MAX_ATTACHMENT_BYTES) throw new ToolFailure(`the attachments add up to ${total} bytes, more than ${MAX_ATTACHMENT_BYTES}`);
        const domain = /@([^>\s]+)>?\s*$/.exec(credentials.from)?.[1] ?? 'flowgate.invalid';
        // The same logical send (a workflow step and its retries) carries the same Message-ID, so
        // receivers that deduplicate on it see one message.
        const messageId = context.idempotencyKey === undefined ? undefined
          : `<${createHash('sha256').update(`${context.orgId}\n${context.idempotencyKey}`).digest('hex').slice(0, 32)}@${domain}>`;
        const smtp = credentials.smtp;
        const address = await checkedAddress(smtp.host, deps.allowPrivateNetwork);
        const security = smtp.security ?? (smtp.port === 465 ? 'tls' : 'starttls');
        const transport = nodemailer.createTransport({
          host: address, port: smtp.port, secure: security === 'tls', requireTLS: security === 'starttls', ignoreTLS: security === 'none',
          auth: smtp.user === undefined ? undefined : { user: smtp.user, pass: smtp.password ?? '' },
          tls: { servername: net.isIP(smtp.host) ? undefined : smtp.host, rejectUnauthorized: smtp.rejectUnauthorized },
          connectionTimeout: NETWORK_TIMEOUT_MS, greetingTimeout: NETWORK_TIMEOUT_MS, socketTimeout: NETWORK_TIMEOUT_MS,
        });
        const abort = (): void => transport.close();
        context.signal.addEventListener('abort', abort, { once: true });
        try {
          const info = await transport.sendMail({
            from: credentials.from,
            to: args.to as string | string[],
            cc: args.cc as string | string[] | undefined,
            bcc: args.bcc as string | string[] | undefined,
            replyTo: args.replyTo as string | undefined,
            subject: String(args.subject),
            text: args.text as string | undefined,
            html: args.html as string | undefined,
            messageId,
            attachments: attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
          });
          return {
            messageId: info.messageId,
            accepted: info.accepted.map(String),
            rejected: info.rejected.map(String),
            response: info.response,
          };
        } catch (error) {
          throw new ToolFailure(`SMTP: ${messageOf(error)}`);
        } finally {
          context.signal.removeEventListener('abort', abort);
          transport.close();
        }
      },
    },
    {
      name: 'mail_list_folders',
      description: 'List the folders (mailboxes) of the mail account over IMAP.',
      inputSchema: { type: 'object', properties: { PCID: pcid }, required: ['PCID'], additionalProperties: false },
      async handler(_args, context) {
        return withImap(context.connection, deps, context.signal, async (client) => {
          const folders = await client.list();
          return { folders: folders.map((f) => ({ path: f.path, name: f.name, ...(f.specialUse ? { specialUse: f.specialUse } : {}) })) };
        });
      },
    },
    {
      name: 'mail_list_messages',
      description: 'List the newest messages of a mail folder over IMAP: uid, subject, from, to, date, seen, size.',
      inputSchema: {
        type: 'object',
        properties: {
          PCID: pcid, folder,
          limit: { type: 'integer', minimum: 1, maximum: 200, description: 'how many messages at most (default 20), newest first' },
          unseenOnly: { type: 'boolean', description: 'only messages not yet seen' },
        },
        required: ['PCID'],
        additionalProperties: false,
      },
      async handler(args, context) {
        const path = typeof args.folder === 'string' ? args.folder : 'INBOX';
        const limit = typeof args.limit === 'number' ? args.limit : 20;
        return withImap(context.connection, deps, context.signal, async (client) => {
          const lock = await openFolder(client, path);
          try {
            const uids = (await client.search(args.unseenOnly === true ? { seen: false } : { all: true }, { uid: true })) || [];
            const newest = [...uids].sort((a, b) => b - a).slice(0, limit);
            if (newest.length === 0) return { folder: path, total: uids.length, messages: [] };
            const fetched = await client.fetchAll(newest.join(','), { uid: true, envelope: true, flags: true, size: true, internalDate: true }, { uid: true });
            const messages = fetched.sort((a, b) => b.uid - a.uid).map((m) => ({
              uid: m.uid,
              subject: m.envelope?.subject ?? '',
              from: formatAddresses(m.envelope?.from),
              to: formatAddresses(m.envelope?.to),
              date: toIso(m.envelope?.date ?? m.internalDate),
              seen: m.flags?.has('\\Seen') ?? false,
              size: m.size ?? 0,
            }));
            return { folder: path, total: uids.length, messages };
          } finally {
            lock.release();
          }
        });
      },
    },
    {
      name: 'mail_read_message',
      description: 'Read one message of a mail folder over IMAP by its uid: headers, text and HTML body, and the list of attachments.',
      inputSchema: {
        type: 'object',
        properties: { PCID: pcid, folder, uid: { type: 'integer', minimum: 1, description: 'the uid from mail_list_messages' } },
        required: ['PCID', 'uid'],
        additionalProperties: false,
      },
      async handler(args, context) {
        const path = typeof args.folder === 'string' ? args.folder : 'INBOX';
        const uid = Number(args.uid);
        return withImap(context.connection, deps, context.signal, async (client) => {
          const lock = await openFolder(client, path);
          try {
            const message = await client.fetchOne(String(uid), { uid: true, envelope: true, bodyStructure: true, flags: true, internalDate: true }, { uid: true });
            if (!message) throw new ToolFailure(`no message with uid ${uid} in ${path}`);
            const parts = { text: undefined as string | undefined, html: undefined as string | undefined, attachments: [] as Record<string, unknown>[] };
            const textParts: { part: string; kind: 'text' | 'html' }[] = [];
            walkStructure(message.bodyStructure, (node) => {
              const filename = node.dispositionParameters?.filename ?? node.parameters?.name;
              if (node.disposition === 'attachment' || (filename !== undefined && !node.type.startsWith('multipart/'))) {
                parts.attachments.push({ filename: filename ?? null, contentType: node.type, size: node.size ?? 0, part: node.part ?? '1' });
              } else if (node.type === 'text/plain' && parts.text === undefined && !textParts.some((p) => p.kind === 'text')) {
                textParts.push({ part: node.part ?? '1', kind: 'text' });
              } else if (node.type === 'text/html' && !textParts.some((p) => p.kind === 'html')) {
                textParts.push({ part: node.part ?? '1', kind: 'html' });
              }
            });
            for (const { part, kind } of textParts) {
              const download = await client.download(String(uid), part, { uid: true, maxBytes: MAX_TEXT_CHARS * 4 });
              if (!('content' in download) || !download.content) continue;
              parts[kind] = (await streamToBuffer(download.content)).toString('utf8');
            }
            const env = message.envelope;
            return {
              folder: path,
              uid,
              messageId: env?.messageId ?? null,
              subject: env?.subject ?? '',
              from: formatAddresses(env?.from),
              to: formatAddresses(env?.to),
              cc: formatAddresses(env?.cc),
              date: toIso(env?.date ?? message.internalDate),
              seen: message.flags?.has('\\Seen') ?? false,
              text: parts.text ?? '',
              ...(parts.html === undefined ? {} : { html: parts.html }),
              attachments: parts.attachments,
            };
          } finally {
            lock.release();
          }
        });
      },
    },
  ];
  return {
    name: MAIL_SERVER_NAME,
    description: 'Email: send messages (SMTP, with attachments) and list and read messages of a mailbox (IMAP). Needs a mail connection (PCID).',
    embedded: true,
    application: MAIL_APPLICATION,
    tools,
  };
}

interface AttachmentRef {
  url?: string;
  key?: string;
  content?: string;
  contentBase64?: string;
  filename?: string;
  contentType?: string;
}

async function resolveAttachment(ref: AttachmentRef, index: number, orgId: string, deps: MailServerDeps): Promise<{ filename: string; content: Buffer; contentType?: string }> {
  const given = [ref.url, ref.key, ref.content, ref.contentBase64].filter((v) => v !== undefined).length;
  if (given !== 1) throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}] needs exactly one of url, key, content, contentBase64`);
  if (ref.content !== undefined) return { filename: ref.filename ?? `attachment-${index + 1}.txt`, content: Buffer.from(ref.content, 'utf8'), contentType: ref.contentType ?? 'text/plain; charset=utf-8' };
  if (ref.contentBase64 !== undefined) return { filename: ref.filename ?? `attachment-${index + 1}`, content: Buffer.from(ref.contentBase64, 'base64'), contentType: ref.contentType };
  let key: string;
  let name: string | undefined;
  let type: string | undefined;
  if (ref.url !== undefined) {
    let url: URL;
    try {
      url = new URL(ref.url);
    } catch {
      throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].url is not a URL`);
    }
    if (!url.pathname.startsWith('/files/')) throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].url is not a flowgate file link`);
    const decoded = decodeFileKey(url.pathname.slice('/files/'.length));
    if (decoded === undefined) throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].url is not a valid file link`);
    key = decoded;
    const params = Object.fromEntries(url.searchParams);
    const verdict = deps.signer.verify(key, params);
    if (verdict !== 'ok') throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].url is ${verdict === 'expired' ? 'an expired' : 'not a valid'} file link`);
    name = params.name;
    type = params.type;
  } else {
    key = String(ref.key);
    // keys are <kind>/<orgId>/…: only the caller's own organization's blobs
    if (key.split('/')[1] !== orgId) throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].key is not a blob of this organization`);
  }
  let content: Buffer | undefined;
  try {
    content = await deps.blobs.read(key);
  } catch {
    content = undefined;
  }
  if (!content) throw new ToolFailure(`attachments[${index}]: the file is gone`);
  return { filename: ref.filename ?? name ?? key.split('/').pop() ?? `attachment-${index + 1}`, content, contentType: ref.contentType ?? type };
}

function credentialsOf(connection: ToolConnection | undefined): MailCredentials {
  const parsed = MailCredentialsSchema.safeParse(connection?.credentials);
  if (!parsed.success) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection?.id} does not hold mail settings`);
  return parsed.data;
}

/** The address to connect to, after the private-network guard judged every answer for the name. */
async function checkedAddress(host: string, allowPrivateNetwork: boolean): Promise<string> {
  const policy = { allowPrivateNetwork };
  if (net.isIP(host)) {
    assertAddressAllowed(host, policy);
    return host;
  }
  let answers: dns.LookupAddress[];
  try {
    answers = await dns.promises.lookup(host, { all: true });
  } catch (error) {
    throw new ToolFailure(`cannot resolve ${host}: ${messageOf(error)}`);
  }
  try {
    for (const a of answers) assertAddressAllowed(a.address, policy, host);
  } catch (error) {
    throw new ToolFailure(messageOf(error));
  }
  const first = answers[0];
  if (!first) throw new ToolFailure(`${host} did not resolve to any address`);
  return first.address;
}

async function withImap<T>(connection: ToolConnection | undefined, deps: MailServerDeps, signal: AbortSignal, use: (client: ImapFlow) => Promise<T>): Promise<T> {
  const credentials = credentialsOf(connection);
  const imap: Endpoint | undefined = credentials.imap;
  if (!imap) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection?.id} has no IMAP settings`);
  const address = await checkedAddress(imap.host, deps.allowPrivateNetwork);
  const security = imap.security ?? (imap.port === 993 ? 'tls' : 'starttls');
  const options: ImapFlowOptions & { doSTARTTLS?: boolean } = {
    host: address, port: imap.port, secure: security === 'tls', doSTARTTLS: security === 'starttls' ? true : security === 'none' ? false : undefined,
    servername: net.isIP(imap.host) ? undefined : imap.host,
    auth: { user: imap.user ?? '', pass: imap.password ?? '' },
    tls: { rejectUnauthorized: imap.rejectUnauthorized },
    logger: false, disableAutoIdle: true,
    connectionTimeout: NETWORK_TIMEOUT_MS, greetingTimeout: NETWORK_TIMEOUT_MS, socketTimeout: NETWORK_TIMEOUT_MS,
  };
  const client = new ImapFlow(options);
  // imapflow emits socket errors as events; without a listener they would crash the process
  client.on('error', () => undefined);
  const abort = (): void => client.close();
  signal.addEventListener('abort', abort, { once: true });
  try {
    try {
      await client.connect();
    } catch (error) {
      throw new ToolFailure(`IMAP: ${imapMessage(error)}`);
    }
    return await use(client);
  } catch (error) {
    if (error instanceof ToolFailure || error instanceof ToolCallError) throw error;
    throw new ToolFailure(`IMAP: ${imapMessage(error)}`);
  } finally {
    signal.removeEventListener('abort', abort);
    await client.logout().catch(() => client.close());
  }
}

async function openFolder(client: ImapFlow, path: string): Promise<{ release(): void }> {
  try {
    return await client.getMailboxLock(path, { readOnly: true });
  } catch (error) {
    throw new ToolFailure(`IMAP: cannot open folder ${path}: ${imapMessage(error)}`);
  }
}

function walkStructure(node: MessageStructureObject | undefined, visit: (node: MessageStructureObject) => void): void {
  if (!node) return;
  if (node.childNodes?.length) {
    for (const child of node.childNodes) walkStructure(child, visit);
    return;
  }
  visit(node);
}

function formatAddresses(list: { name?: string; address?: string }[] | undefined): string[] {
  return (list ?? []).map((a) => (a.name ? `${a.name} <${a.address ?? ''}>` : (a.address ?? '')));
}

function toIso(date: Date | string | undefined): string | null {
  if (date === undefined) return null;
  const d = typeof date === 'string' ? new Date(date) : date;
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

async function streamToBuffer(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

function imapMessage(error: unknown): string {
  const e = error as { responseText?: string; message?: string; authenticationFailed?: boolean };
  if (e.authenticationFailed) return 'authentication failed';
  return e.responseText ?? e.message ?? String(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
