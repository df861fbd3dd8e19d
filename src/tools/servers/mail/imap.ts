/**
 * The reading half of the `mail` server: list folders and messages and read a message over IMAP
 * (imapflow), with the credentials of the `mail` connection.
 */
import { ImapFlow, type ImapFlowOptions, type MessageStructureObject } from 'imapflow';
import net from 'node:net';
import { z } from 'zod';
import { defineTool, type DefinedTool } from '../../define-tool';
import { ToolCallError, ToolFailure, type CallContext } from '../../server';
import { NETWORK_TIMEOUT_MS, checkedAddress, credentialsOf, folderSchema, type Endpoint } from './common';
import { MAX_TEXT_CHARS } from './smtp';
import { fieldOf } from '../../../common/narrow';

export const listFolders: DefinedTool = defineTool({
  name: 'mail_list_folders',
  description: 'List the folders (mailboxes) of the mail account over IMAP.',
  input: z.object({}).strict(),
  async handler(_args, context) {
    return withImap(context, async (client) => {
      const folders = await client.list();
      return { folders: folders.map((f) => ({ path: f.path, name: f.name, ...(f.specialUse ? { specialUse: f.specialUse } : {}) })) };
    });
  },
});

export const listMessages: DefinedTool = defineTool({
  name: 'mail_list_messages',
  description: 'List the newest messages of a mail folder over IMAP: uid, subject, from, to, date, seen, size.',
  input: z.object({
    folder: folderSchema,
    limit: z.number().int().min(1).max(200).default(20).describe('how many messages at most (default 20), newest first'),
    unseenOnly: z.boolean().default(false).describe('only messages not yet seen'),
  }).strict(),
  async handler({ folder: path, limit, unseenOnly }, context) {
    return withImap(context, async (client) => {
      const lock = await openFolder(client, path);
      try {
        const uids = (await client.search(unseenOnly ? { seen: false } : { all: true }, { uid: true })) || [];
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
});

export const readMessage: DefinedTool = defineTool({
  name: 'mail_read_message',
  description: 'Read one message of a mail folder over IMAP by its uid: headers, text and HTML body, and the list of attachments.',
  input: z.object({
    folder: folderSchema,
    uid: z.number().int().min(1).describe('the uid from mail_list_messages'),
  }).strict(),
  async handler({ folder: path, uid }, context) {
    return withImap(context, async (client) => {
      const lock = await openFolder(client, path);
      try {
        const message = await client.fetchOne(String(uid), { uid: true, envelope: true, bodyStructure: true, flags: true, internalDate: true }, { uid: true });
        if (!message) throw new ToolFailure(`no message with uid ${uid} in ${path}`);
        const parts: { text: string | undefined; html: string | undefined; attachments: Record<string, unknown>[] } = { text: undefined, html: undefined, attachments: [] };
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
});

async function withImap<T>(context: CallContext, use: (client: ImapFlow) => Promise<T>): Promise<T> {
  const { connection, signal } = context;
  const credentials = credentialsOf(connection);
  const imap: Endpoint | undefined = credentials.imap;
  if (!imap) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection?.id} has no IMAP settings`);
  const address = await checkedAddress(imap.host, context.services.allowPrivateNetwork);
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
  if (fieldOf(error, 'authenticationFailed')) return 'authentication failed';
  return String(fieldOf(error, 'responseText') ?? fieldOf(error, 'message') ?? String(error));
}

