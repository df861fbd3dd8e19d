import assert from 'node:assert/strict';
import { rankTools, tokenize, type ListedServer } from '../../src/tools/servers/discovery/ranking';

const tool = (name: string, description: string, args: string[] = []) => ({
  name, description, inputSchema: { type: 'object' as const, properties: Object.fromEntries(args.map((a) => [a, { type: 'string' }])), required: [] },
});

const servers: ListedServer[] = [
  { server: { name: 'web-search', description: 'Search the web.' }, tools: [tool('search', 'Search the web for a query.', ['query', 'limit'])] },
  { server: { name: 'mail', description: 'Email over SMTP and IMAP.', application: 'mail' }, tools: [
    tool('mail_send_message', 'Send an email message with attachments.', ['PCID', 'to', 'subject', 'attachments']),
    tool('mail_list_messages', 'List the newest messages of a folder.', ['PCID', 'folder']),
  ] },
  { server: { name: 'calendar', description: 'Meetings.' }, tools: [tool('createEvent', 'Schedule a meeting with attendees.', ['attendees', 'startTime'])] },
];

describe('tool discovery ranking', () => {
  it('splits camelCase, snake_case and kebab-case, drops stop words and folds synonyms', () => {
    assert.deepEqual(tokenize('mail_send_message'), ['mail', 'send', 'message']);
    assert.deepEqual(tokenize('createEvent startTime'), ['create', 'event', 'start', 'time']);
    assert.deepEqual(tokenize('Please e-mail the invoices'), ['mail', 'invoice']);
    assert.deepEqual(tokenize('find it on the internet'), ['search', 'web']);
  });

  it('ranks by name, argument names and descriptions, with confidences in (0, 1], best first', () => {
    const email = rankTools('email the customer an invoice as an attachment', servers, 5);
    assert.equal(email[0]?.tool.name, 'mail_send_message');
    const web = rankTools('look up the weather online', servers, 5);
    assert.equal(web[0]?.tool.name, 'search');
    const meeting = rankTools('schedule a meeting with the attendees', servers, 5);
    assert.equal(meeting[0]?.tool.name, 'createEvent');
    for (const ranked of [email, web, meeting]) {
      for (const r of ranked) assert.ok(r.confidence > 0 && r.confidence <= 1);
      assert.deepEqual(ranked.map((r) => r.confidence), [...ranked.map((r) => r.confidence)].sort((a, b) => b - a));
    }
  });

  it('answers nothing for a task no tool matches, and honours the limit', () => {
    assert.deepEqual(rankTools('bake sourdough bread', servers, 5), []);
    assert.deepEqual(rankTools('', servers, 5), []);
    assert.equal(rankTools('message mail search web meeting', servers, 2).length, 2);
  });
});
