/**
 * What both halves of the mail server share: the connection's credentials and the guarded
 * resolution of a mail host. Mail hosts are the customer's, so they pass the same private-network
 * guard as outbound HTTP: the name is resolved here, every answer judged, and the socket opened to
 * the checked address (TLS still verifies the certificate against the name).
 */
import dns from 'node:dns';
import net from 'node:net';
import { z } from 'zod';
import { assertAddressAllowed } from '../../../net/address-policy';
import { ToolCallError, ToolFailure, type ToolConnection } from '../../server';

export const MAIL_APPLICATION = 'mail';
export const NETWORK_TIMEOUT_MS = 20_000;

export const EndpointSchema = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  /** tls: implicit TLS (465, 993); starttls: upgrade required; none: plain text (test and internal servers only) */
  security: z.enum(['tls', 'starttls', 'none']).optional(),
  user: z.string().min(1).max(500).optional(),
  password: z.string().max(2000).optional(),
  /** false accepts self-signed certificates */
  rejectUnauthorized: z.boolean().default(true),
}).strict();
export type Endpoint = z.infer<typeof EndpointSchema>;

export const MailCredentialsSchema = z.object({
  from: z.string().min(3).max(500),
  smtp: EndpointSchema.optional(),
  imap: EndpointSchema.optional(),
}).strict().refine((c) => c.smtp !== undefined || c.imap !== undefined, { message: 'needs smtp, imap or both' });
export type MailCredentials = z.infer<typeof MailCredentialsSchema>;

export const folderSchema = z.string().min(1).max(500).default('INBOX').describe('the folder (mailbox), default INBOX');

export function credentialsOf(connection: ToolConnection | undefined): MailCredentials {
  const parsed = MailCredentialsSchema.safeParse(connection?.credentials);
  if (!parsed.success) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection?.id} does not hold mail settings`);
  return parsed.data;
}

/** The address to connect to, after the private-network guard judged every answer for the name. */
export async function checkedAddress(host: string, allowPrivateNetwork: boolean): Promise<string> {
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

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
