/**
 * A real IMAP server for the mail tests: Debian's Dovecot, run in the foreground on loopback with a
 * throw-away configuration (plain-text auth, one passwd-file user, Maildir in a temp dir).
 * If Dovecot is missing it is installed with apt-get (root only); where that is impossible the
 * caller fails under CI=true and skips loudly elsewhere (test/support/ci.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../temporal/ports';

const run = promisify(execFile);

export interface Dovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  stop(): Promise<void>;
}

function findDovecot(): string | undefined {
  return ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot'].find((p) => existsSync(p));
}

/** The binary, installing it when we may; a reason when we cannot. */
export async function ensureDovecot(): Promise<{ path: string } | { missing: string }> {
  const found = findDovecot();
  if (found) return { path: found };
  if (process.getuid?.() !== 0) return { missing: 'Dovecot is not installed and this is not root: run `apt-get install -y dovecot-imapd` (CI\'s .ci/run does)' };
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-qq'], { env, timeout: 300_000 });
    await run('apt-get', ['install', '-y', '-qq', 'dovecot-imapd'], { env, timeout: 600_000 });
  } catch (error) {
    return { missing: `Dovecot is not installed and apt-get could not install it: ${error instanceof Error ? error.message : String(error)}` };
  }
  const installed = findDovecot();
  return installed ? { path: installed } : { missing: 'apt-get ran but no dovecot binary appeared' };
}

export async function startDovecot(binary: string): Promise<Dovecot> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-dovecot-'));
  const port = await freePort();
  const user = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const root = process.getuid?.() === 0;
  // Dovecot refuses mail access as uid 0, so root runs the mailboxes as the `mail` user (uid 8).
  const internalUser = root ? 'dovenull' : os.userInfo().username;
  const { uid, gid } = root ? { uid: 8, gid: 8 } : { uid: os.userInfo().uid, gid: os.userInfo().gid };
  // Dovecot's unprivileged auth and login processes must reach the passwd file
  chmodSync(dir, 0o755);
  const mailDir = path.join(dir, 'mail');
  mkdirSync(mailDir);
  if (root) chownSync(mailDir, uid, gid);
  writeFileSync(path.join(dir, 'passwd'), `${user}:{PLAIN}${password}:${uid}:${gid}::${mailDir}/${user}\n`);
  const config = path.join(dir, 'dovecot.conf');
  writeFileSync(config, `
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = ${Math.min(uid, 1) || 1}
first_valid_gid = 0
default_login_user = ${internalUser}
default_internal_user = ${internalUser}
${root ? '' : `default_internal_group = ${os.userInfo().username}\n`}mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u ${dir}/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`);
  const child: ChildProcess = spawn(binary, ['-F', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited (${child.exitCode}): ${stderr}`);
    if (await canConnect(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`dovecot did not listen on ${port}: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    host: '127.0.0.1', port, user, password,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
