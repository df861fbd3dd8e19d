/**
 * Definitions as code from a Git host over https (docs/definitions-as-code.md#git-sources): the
 * real CLI in a child process clones with the `git` binary from `git http-backend` behind TLS on
 * loopback, whose certificate a CA made for the test signed. Git trusts it only through
 * GIT_SSL_CAINFO; a private repository answers only to a token, which the CLI never prints and
 * never sends to be recorded (plan, audit trail, console).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PlanBody } from '../../src/cli/definitions';
import { runCli, type CliResult } from '../support/cli-run';
import { consoleHttp } from '../support/console-http';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { startGitHttp, type GitHttp } from '../support/git-http';
import { gitIn } from '../support/git-repo';
import { makeTestCertificate, type TestCertificate } from '../support/test-ca';

interface Repo { tagSha: string; headSha: string }
interface AuditBody { records: { action: string; details: Record<string, unknown> }[] }

/** A bare repository `<root>/<name>.git` with workflows/<workflow>.yaml: tag v1 at its first commit, a second commit on main. */
async function makeRepo(home: string, root: string, name: string, workflow: string): Promise<Repo> {
  const work = path.join(home, `work-${name}`);
  mkdirSync(path.join(work, 'workflows'), { recursive: true });
  const file = path.join(work, 'workflows', `${workflow}.yaml`);
  const write = (says: string) => writeFileSync(file, `kind: workflow\nname: ${workflow}\nsteps:\n  - { name: Say, type: template, template: ${says} }\n`);
  write('v1');
  await gitIn(work, 'init', '--quiet');
  await gitIn(work, 'add', '-A');
  await gitIn(work, 'commit', '--quiet', '-m', 'v1');
  await gitIn(work, 'tag', 'v1');
  const tagSha = await gitIn(work, 'rev-parse', 'HEAD');
  write('v2');
  await gitIn(work, 'commit', '--quiet', '-am', 'v2');
  const headSha = await gitIn(work, 'rev-parse', 'HEAD');
  await gitIn(home, 'clone', '--quiet', '--bare', work, path.join(root, `${name}.git`));
  return { tagSha, headSha };
}

const noStackTrace = (r: CliResult) => assert.doesNotMatch(r.stderr, /^\s+at /m, `no stack trace: ${r.stderr}`);

describe('definitions as code: flowgate plan and apply from a Git URL over https', () => {
  let fg: TestFlowgate;
  let home: string;
  let ca: TestCertificate;
  let open: GitHttp;
  let locked: GitHttp;
  let published: Repo;
  let privateRepo: Repo;
  /** shaped as GitHub's installation tokens are (what GitHub Actions hands a job as GITHUB_TOKEN) */
  const TOKEN = `ghs_${randomBytes(18).toString('hex')}`;

  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-defs-https-'));
    ca = await makeTestCertificate(path.join(home, 'ca'));
    const openRoot = path.join(home, 'open');
    const lockedRoot = path.join(home, 'locked');
    published = await makeRepo(home, openRoot, 'defs', 'greet');
    privateRepo = await makeRepo(home, lockedRoot, 'private', 'payroll');
    open = await startGitHttp(openRoot, { tls: ca });
    locked = await startGitHttp(lockedRoot, { tls: ca, basicAuth: { username: 'x-access-token', password: TOKEN } });
  });
  after(async () => {
    await fg?.stop();
    await open?.close();
    await locked?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(args, { url: fg.url, token: fg.adminToken, home, env, timeoutMs: 150_000 });
  const trusted = (): Record<string, string> => ({ GIT_SSL_CAINFO: ca.caFile });
  const planOf = (r: CliResult, code: number): PlanBody => {
    assert.equal(r.code, code, `${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout) as PlanBody;
  };

  it('trusts the host\'s certificate through GIT_SSL_CAINFO: at a tag and at a commit SHA the plan works and records the commit', async () => {
    assert.match(open.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const atTag = planOf(await cli(['--json', 'plan', `${open.url}/defs.git@v1`], trusted()), 2);
    assert.deepEqual(atTag.changes.map((c) => `${c.action} ${c.kind}/${c.name}`), ['create workflow/greet']);
    assert.match(atTag.changes[0]?.diff ?? '', /template: v1/);
    assert.equal(atTag.commit, published.tagSha, 'a tag is read at its commit');
    assert.equal(atTag.source, `${open.url}/defs.git@v1`);

    const atSha = planOf(await cli(['--json', 'plan', `${open.url}/defs.git@${published.headSha}`], trusted()), 2);
    assert.equal(atSha.commit, published.headSha);
    assert.match(atSha.changes[0]?.diff ?? '', /template: v2/);
    const shown = await cli(['plan', `${open.url}/defs.git@${published.headSha}`], trusted());
    assert.equal(shown.code, 2, shown.stderr);
    assert.match(shown.stdout, new RegExp(`Plan: 1 to create, 0 to change, 0 to delete; 0 drifted \\(commit ${published.headSha}\\)`));
  });

  it('without the CA: exit 1 and one line naming the certificate problem and GIT_SSL_CAINFO, no stack trace, nothing planned', async () => {
    const plansOf = async () => (await fg.admin<AuditBody>('GET', '/api/v1/audit?limit=100')).body.records
      .filter((r) => r.action === 'definitions.planned' && String(r.details.source).startsWith(open.url)).length;
    const plansBefore = await plansOf();
    for (const ref of ['v1', published.headSha]) {
      const [connections, requests] = [open.connections, open.requests];
      const refused = await cli(['plan', `${open.url}/defs.git@${ref}`]);
      assert.equal(refused.code, 1, `${refused.stdout}${refused.stderr}`);
      assert.equal(refused.stdout, '');
      assert.match(refused.stderr, /^flowgate: git \w+: fatal: unable to access '[^']+': .*certificate/);
      assert.match(refused.stderr, /set GIT_SSL_CAINFO to the CA's certificate file/);
      noStackTrace(refused);
      assert.ok(open.connections > connections, 'git connected');
      assert.equal(open.requests, requests, 'and gave up at the certificate, before a request');
    }
    assert.equal(await plansOf(), plansBefore, 'nothing reached the server');
  });

  it('a private repository: refused without its token; with the token in the URL or in an http.extraHeader it plans and applies, and the token is never printed or recorded', async () => {
    const repoUrl = `${locked.url}/private.git`;
    const withToken = (token: string) => repoUrl.replace('https://', `https://x-access-token:${token}@`);
    const outputOf = (r: CliResult) => `${r.stdout}${r.stderr}`;

    const refusedBefore = locked.refused;
    const anonymous = await cli(['plan', `${repoUrl}@v1`], trusted());
    assert.equal(anonymous.code, 1, outputOf(anonymous));
    assert.match(anonymous.stderr, /^flowgate: git \w+: fatal: could not read Username for 'https:\/\/127\.0\.0\.1:\d+': terminal prompts disabled/);
    assert.match(anonymous.stderr, /a private repository: put a token in the URL/);
    noStackTrace(anonymous);
    assert.ok(locked.refused > refusedBefore, 'the host asked for credentials');

    const wrongToken = `ghs_${randomBytes(18).toString('hex')}`;
    const wrong = await cli(['plan', `${withToken(wrongToken)}@v1`], trusted());
    assert.equal(wrong.code, 1, outputOf(wrong));
    assert.match(wrong.stderr, /Authentication failed for 'https:\/\/127\.0\.0\.1:\d+\/private\.git\/'/);
    assert.ok(!outputOf(wrong).includes(wrongToken), `a refused token is not printed either: ${outputOf(wrong)}`);
    noStackTrace(wrong);

    // the token in the URL, as GitHub Actions' checkout does (x-access-token:<GITHUB_TOKEN>)
    const planned = await cli(['--json', 'plan', `${withToken(TOKEN)}@v1`], trusted());
    assert.ok(!outputOf(planned).includes(TOKEN), `the token is not printed: ${outputOf(planned)}`);
    const plan = planOf(planned, 2);
    assert.equal(plan.commit, privateRepo.tagSha);
    assert.equal(plan.source, `${repoUrl}@v1`, 'the recorded source has no credentials');

    // the token in a header, from the environment only (GIT_CONFIG_*: not on a command line, not in a file)
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const header = { ...trusted(), GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
    const byHeader = await cli(['--json', 'plan', `${repoUrl}@${privateRepo.headSha}`], header);
    assert.ok(!outputOf(byHeader).includes(TOKEN) && !outputOf(byHeader).includes(basic), outputOf(byHeader));
    assert.equal(planOf(byHeader, 2).commit, privateRepo.headSha);

    const applied = await cli(['apply', `${withToken(TOKEN)}@v1`], trusted());
    assert.equal(applied.code, 0, outputOf(applied));
    assert.ok(!outputOf(applied).includes(TOKEN), outputOf(applied));
    assert.match(applied.stdout, new RegExp(`Applied: 1 to create, 0 to change, 0 to delete; 0 drifted \\(commit ${privateRepo.tagSha}\\)`));

    // what the server keeps: the audit trail and the workflow's page name the URL without the token
    const audit = await fg.admin<AuditBody>('GET', '/api/v1/audit?limit=100');
    assert.equal(audit.status, 200);
    assert.ok(!JSON.stringify(audit.body).includes(TOKEN), 'no token in the audit trail');
    const record = audit.body.records.find((r) => r.action === 'definitions.applied' && r.details.commit === privateRepo.tagSha);
    assert.ok(record, 'the apply is recorded');
    assert.equal(record.details.source, `${repoUrl}@v1`);
    const plannedSources = audit.body.records.filter((r) => r.action === 'definitions.planned' && String(r.details.source).startsWith(repoUrl));
    assert.ok(plannedSources.length >= 3, 'the plans of the private repository are recorded');
    const workflows = await fg.admin<{ workflows: { id: string; name: string }[] }>('GET', '/api/v1/workflows');
    const payroll = workflows.body.workflows.find((w) => w.name === 'payroll');
    assert.ok(payroll, 'the workflow is applied');
    const web = consoleHttp(() => fg);
    const page = await (await web.get(await web.signIn(fg.adminToken), `/console/workflows/${payroll.id}`)).text();
    assert.ok(page.includes(`applied from <code>${repoUrl}@v1</code>`), 'the console names the source');
    assert.ok(!page.includes(TOKEN), 'no token on the console');
  });
});
