/**
 * The `mail` application server: its sending half over SMTP (smtp.ts) and its reading half over
 * IMAP (imap.ts), both with the credentials of a `mail` connection (`PCID`).
 */
import { toolServer } from '../../define-tool';
import type { ToolServer } from '../../server';
import { MAIL_APPLICATION } from './common';
import { listFolders, listMessages, readMessage } from './imap';
import { sendMessage } from './smtp';

export { MAIL_APPLICATION, MailCredentialsSchema } from './common';
export const MAIL_SERVER_NAME = 'mail';

export function mailServer(): ToolServer {
  return toolServer({
    name: MAIL_SERVER_NAME,
    description: 'Email: send messages (SMTP, with attachments) and list and read messages of a mailbox (IMAP). Needs a mail connection (PCID).',
    application: MAIL_APPLICATION,
    tools: [sendMessage, listFolders, listMessages, readMessage],
  });
}
