/**
 * `svc login` with the OS keyring: a real Secret Service (gnome-keyring-daemon in a private
 * D-Bus session started by dbus-run-session; both installed by .ci/run). The token goes into
 * the keyring (secret-tool finds it there), no token file is written, the stored token is used
 * against a node with auth required, and logout removes it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startNode, tempDir, type NodeProcess } from '../../helpers/node-process';
import { SVC_BIN } from '../../helpers/svc-cli';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;

let node: NodeProcess;
beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
});

/** Runs `script` in bash inside a fresh D-Bus session with an unlocked gnome-keyring. */
function inKeyringSession(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const wrapped = `set -u
printf 'test-password' | gnome-keyring-daemon --unlock --components=secrets >/dev/null
sleep 0.5
svc() { "${process.execPath}" "${SVC_BIN}" "$@"; }
${script}`;
  return new Promise((resolve) => {
    const p = spawn('dbus-run-session', ['--', 'bash', '-c', wrapped], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 50_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('login stores the token in the Secret Service keyring, commands use it, logout removes it', async () => {
  const home = tempDir('svc-keyring-home-');
  const config = path.join(home, 'config');
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: home, SVC_CONFIG_DIR: config, SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! };
  const { code, out } = await inKeyringSession(
    `svc login "${ROOT}"; echo "login=$?"
echo "stored=$(secret-tool lookup service svc username default)"
svc create /kr/a; echo "create=$?"
svc whoami -o json
svc logout; echo "logout=$?"
echo "after=$(secret-tool lookup service svc username default)"
svc ls; echo "ls=$?"`,
    env,
  );
  expect(code).toBe(0);
  expect(out).toMatch(/logged in to profile default as root \(token kept in the OS keyring\)/);
  expect(out).toContain('login=0');
  expect(out).toContain(`stored=${ROOT}`);
  expect(out).toContain('create=0');
  expect(out).toMatch(/"tokenId":"root","source":"store"/);
  expect(out).toContain('logout=0');
  expect(out).toContain('after=\n');
  expect(out).toContain('ls=3');
  expect(fs.existsSync(path.join(config, 'tokens.json'))).toBe(false);
});
