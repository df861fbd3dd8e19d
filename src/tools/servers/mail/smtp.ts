/**
 * The sending half of the `mail` server: `mail_send_message` over SMTP (nodemailer), with
 * attachments from blob references: a signed flowgate file link (what a workflow's inputs and
 * results hand out), a blob key of the caller's own organization, or inline content.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import { decodeFileKey } from '../../../crypto/signed-urls';
import { defineTool, type DefinedTool } from '../../define-tool';
import { ToolCallError, ToolFailure, type CallContext } from '../../server';
import { NETWORK_TIMEOUT_MS, checkedAddress, credentialsOf, messageOf } from './common';

const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
export const MAX_TEXT_CHARS = 1_000_000;

const addresses = z.union([z.string().min(3), z.array(z.string().min(3)).min(1).max(100)]);

const AttachmentRefSchema = z.object({
  url: z.string().optional().describe('a signed flowgate file link (from run results or trigger attachments)'),
  key: z.string().optional().describe('a blob key of this organization'),
  content: z.string().optional().describe('inline text content'),
  contentBase64: z.string().optional().describe('inline binary content, base64'),
  filename: z.string().min(1).max(255).optional(),
  contentType: z.string().min(3).max(255).optional(),
}).strict();
type AttachmentRef = z.infer<typeof AttachmentRefSchema>;

export const sendMessage: DefinedTool = defineTool({
  name: 'mail_send_message',
  description: 'Send an email message over SMTP, with optional attachments (signed flowgate file links, blob keys, or inline content).',
  timeoutMs: 60_000,
  input: z.object({
    to: addresses.describe('recipient address(es)'),
    cc: addresses.optional(),
    bcc: addresses.optional(),
    replyTo: z.string().min(3).optional(),
    subject: z.string().max(1000),
    text: z.string().max(MAX_TEXT_CHARS).optional().describe('plain-text body'),
    html: z.string().max(MAX_TEXT_CHARS).optional().describe('HTML body'),
    attachments: z.array(AttachmentRefSchema).max(20).optional(),
  }).strict(),
  async handler(args, context) {
    const credentials = credentialsOf(context.connection);
    if (!credentials.smtp) throw new ToolCallError('CONNECTION_REFUSED', `connection ${context.connection?.id} has no SMTP settings`);
    const attachments = await Promise.all((args.attachments ?? []).map((ref, i) => resolveAttachment(ref, i, context)));
    const total = attachments.reduce((sum, a) => sum + a.content.length, 0);
    if (total > MAX_ATTACHMENT_BYTES) throw new ToolFailure(`the attachments add up to ${total} bytes, more than ${MAX_ATTACHMENT_BYTES}`);
    const domain = /@([^>\s]+)>?\s*$/.exec(credentials.from)?.[1] ?? 'flowgate.invalid';
    // The same logical send (a workflow step and its retries) carries the same Message-ID, so
    // receivers that deduplicate on it see one message.
    const messageId = context.idempotencyKey === undefined ? undefined
      : `<${createHash('sha256').update(`${context.orgId}\n${context.idempotencyKey}`).digest('hex').slice(0, 32)}@${domain}>`;
    const smtp = credentials.smtp;
    const address = await checkedAddress(smtp.host, context.services.allowPrivateNetwork);
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
        to: args.to,
        cc: args.cc,
        bcc: args.bcc,
        replyTo: args.replyTo,
        subject: args.subject,
        text: args.text,
        html: args.html,
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
});

async function resolveAttachment(ref: AttachmentRef, index: number, context: CallContext): Promise<{ filename: string; content: Buffer; contentType?: string }> {
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
    const verdict = context.services.signer.verify(key, params);
    if (verdict !== 'ok') throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].url is ${verdict === 'expired' ? 'an expired' : 'not a valid'} file link`);
    name = params.name;
    type = params.type;
  } else {
    key = String(ref.key);
    // keys are <kind>/<orgId>/…: only the caller's own organization's blobs
    if (key.split('/')[1] !== context.orgId) throw new ToolCallError('INVALID_ARGUMENTS', `attachments[${index}].key is not a blob of this organization`);
  }
  let content: Buffer | undefined;
  try {
    content = await context.services.blobs.read(key);
  } catch {
    content = undefined;
  }
  if (!content) throw new ToolFailure(`attachments[${index}]: the file is gone`);
  return { filename: ref.filename ?? name ?? key.split('/').pop() ?? `attachment-${index + 1}`, content, contentType: ref.contentType ?? type };
}

