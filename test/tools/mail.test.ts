import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { ImapFlow } from 'imapflow';
import { SMTPServer } from 'smtp-server';
import { missingPeer } from '../support/ci';
import { getJson, publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { ensureDovecot, startDovecot, type Dovecot } from './dovecot';
import { callTool, rpc, RPC_HEADERS, runtimeToken, startToolFlowgate } from './support';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server (the smtp-server library) on loopback that requires AUTH and keeps what it receives. */
async function startSmtp(user: string, password: string): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    secure: false, disabledCommands: ['STARTTLS'], allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'], logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function structured<T>(answer: { body?: { result?: Record<string, unknown>; error?: { code: number; message: string } } }): T {
  assert.equal(answer.body?.error, undefined, JSON.stringify(answer.body?.error));
  return answer.body?.result?.structuredContent as T;
}

describe('mail application server (SMTP and IMAP)', function () {
  let fg: TestFlowgate;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let dovecot: Dovecot | undefined;
  let token: string;
  let pcid: string;

  before(async function () {
    this.timeout(15 * 60_000); // a first run may install Dovecot
    const binary = await ensureDovecot();
    if ('missing' in binary) missingPeer(this, 'the mail tests (need Dovecot)', binary.missing);
    dovecot = await startDovecot(binary.path);
    smtp = await startSmtp('mailer', 'smtp-secret');
    fg = await startToolFlowgate();
    token = (await runtimeToken(fg)).token;
    const created = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
      application: 'mail', name: 'alice',
      credentials: {
        from: 'Alice <alice@example.test>',
        smtp: { host: '127.0.0.1', port: smtp.port, security: 'none', user: 'mailer', password: 'smtp-secret' },
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password },
      },
    });
    assert.equal(created.status, 201);
    pcid = created.body.PCID;
  });
  after(async () => {
    await fg?.stop();
    await smtp?.close();
    await dovecot?.stop();
  });

  it('sends a message over SMTP with attachments from a signed file link and inline content', async () => {
    const p = await publishWorkflow(fg, { name: 'report', steps: [{ name: 'Report', type: 'template', format: 'plaintext', template: 'Quarterly numbers: {{inputs.n}}' }] });
    const run = await trigger(fg, p, { n: 42 }, { 'x-api-wait': 'true' });
    const runId = run.headers.get('X-Pf-Run-Id') ?? '';
    const results = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const link = results.body.results[0]?.resultUrls['output.txt']?.url ?? '';

    const answer = await rpc(fg, 'mail', token, {
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: {
        name: 'mail_send_message', arguments: {
          PCID: pcid, to: ['bob@example.test', 'carol@example.test'], subject: 'Q3 report', text: 'See attached.',
          attachments: [{ url: link, filename: 'report.txt' }, { content: 'a,b\n1,2\n', filename: 'data.csv', contentType: 'text/csv' }],
        },
      },
    }, { ...RPC_HEADERS, 'Idempotency-Key': 'send-q3-report' });
    const sent = structured<{ messageId: string; accepted: string[]; rejected: string[] }>(answer);
    assert.deepEqual(sent.accepted, ['bob@example.test', 'carol@example.test']);
    assert.deepEqual(sent.rejected, []);
    const message = smtp.received[smtp.received.length - 1];
    assert.ok(message);
    assert.equal(message.from, 'alice@example.test');
    assert.deepEqual(message.to, ['bob@example.test', 'carol@example.test']);
    assert.match(message.raw, /^Subject: Q3 report\r?$/m);
    assert.match(message.raw, /filename=report\.txt/);
    assert.match(message.raw, /filename=data\.csv/);
    assert.ok(message.raw.includes(Buffer.from('Quarterly numbers: 42').toString('base64')) || message.raw.includes('Quarterly numbers: 42'));
    assert.ok(message.raw.includes(`Message-ID: ${sent.messageId}`));

    // the same idempotency key gives the same Message-ID, so a retried send is recognisably one message
    const again = await rpc(fg, 'mail', token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'mail_send_message', arguments: { PCID: pcid, to: 'bob@example.test', subject: 'Q3 report', text: 'See attached.' } } },
      { ...RPC_HEADERS, 'Idempotency-Key': 'send-q3-report' });
    assert.equal(structured<{ messageId: string }>(again).messageId, sent.messageId);
  });

  it('refuses a tampered file link and another organization\'s blob key with -32000', async () => {
    const tampered = await callTool(fg, 'mail', token, 'mail_send_message', {
      PCID: pcid, to: 'bob@example.test', subject: 'x', attachments: [{ url: `${fg.url}/files/runs/org_default/r/steps/1/output.txt?exp=9999999999&sig=forged` }],
    });
    assert.equal(tampered.body?.error?.code, -32000);
    assert.match(tampered.body?.error?.message ?? '', /not a valid file link/);
    const foreign = await callTool(fg, 'mail', token, 'mail_send_message', {
      PCID: pcid, to: 'bob@example.test', subject: 'x', attachments: [{ key: 'runs/org_someone/r/steps/1/output.txt' }],
    });
    assert.equal(foreign.body?.error?.code, -32000);
  });

  it('answers a failed SMTP delivery as a tool error with the reason', async () => {
    const bad = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
      application: 'mail', credentials: { from: 'x@example.test', smtp: { host: '127.0.0.1', port: smtp.port, security: 'none', user: 'mailer', password: 'wrong' } },
    });
    const answer = await callTool(fg, 'mail', token, 'mail_send_message', { PCID: bad.body.PCID, to: 'bob@example.test', subject: 'x', text: 'y' });
    const result = answer.body?.result as { isError: boolean; structuredContent: { error: string } };
    assert.equal(result.isError, true);
    assert.match(result.structuredContent.error, /^SMTP: .*Invalid username or password/);
  });

  it('lists folders and messages and reads a message over IMAP', async () => {
    const raw = smtp.received[0]?.raw;
    assert.ok(raw, 'the first test delivered a message');
    // deliver what the SMTP server received into Alice's INBOX, as a mail system would
    const imap = new ImapFlow({ host: dovecot!.host, port: dovecot!.port, secure: false, auth: { user: dovecot!.user, pass: dovecot!.password }, logger: false });
    await imap.connect();
    await imap.mailboxCreate('Archive');
    await imap.append('INBOX', 'From: Dan <dan@example.test>\r\nTo: alice@example.test\r\nSubject: older note\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n\r\nhello\r\n', ['\\Seen']);
    await imap.append('INBOX', raw);
    await imap.logout();

    const folders = structured<{ folders: { path: string }[] }>(await callTool(fg, 'mail', token, 'mail_list_folders', { PCID: pcid }));
    assert.deepEqual(folders.folders.map((f) => f.path).sort(), ['Archive', 'INBOX']);

    const listed = structured<{ folder: string; total: number; messages: { uid: number; subject: string; from: string[]; to: string[]; seen: boolean }[] }>(
      await callTool(fg, 'mail', token, 'mail_list_messages', { PCID: pcid, folder: 'INBOX', limit: 10 }));
    assert.equal(listed.total, 2);
    assert.deepEqual(listed.messages.map((m) => [m.subject, m.seen]), [['Q3 report', false], ['older note', true]]);
    assert.deepEqual(listed.messages[0]?.from, ['Alice <alice@example.test>']);
    const unseen = structured<{ messages: unknown[] }>(await callTool(fg, 'mail', token, 'mail_list_messages', { PCID: pcid, unseenOnly: true }));
    assert.equal(unseen.messages.length, 1);

    const read = structured<{ subject: string; text: string; attachments: { filename: string; contentType: string; size: number }[]; to: string[] }>(
      await callTool(fg, 'mail', token, 'mail_read_message', { PCID: pcid, uid: listed.messages[0]?.uid }));
    assert.equal(read.subject, 'Q3 report');
    assert.equal(read.text.trim(), 'See attached.');
    assert.deepEqual(read.to, ['bob@example.test', 'carol@example.test']);
    assert.deepEqual(read.attachments.map((a) => [a.filename, a.contentType]), [['report.txt', 'text/plain'], ['data.csv', 'text/csv']]);

    const missing = await callTool(fg, 'mail', token, 'mail_read_message', { PCID: pcid, uid: 9999 });
    assert.equal((missing.body?.result as { isError: boolean }).isError, true);
  });

  it('answers bad IMAP credentials as a tool error, without the password', async () => {
    const bad = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
      application: 'mail', credentials: { from: 'x@example.test', imap: { host: dovecot!.host, port: dovecot!.port, security: 'none', user: dovecot!.user, password: 'not-the-password' } },
    });
    const answer = await callTool(fg, 'mail', token, 'mail_list_messages', { PCID: bad.body.PCID });
    const result = answer.body?.result as { isError: boolean; structuredContent: { error: string } };
    assert.equal(result.isError, true);
    assert.match(result.structuredContent.error, /^IMAP: authentication failed/);
    assert.doesNotMatch(answer.text, /not-the-password/);
  });
});
