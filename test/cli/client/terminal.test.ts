/**
 * What a person at a terminal sees: the real binary in tmux (a real pty), the screen read back
 * with capture-pane. The progress line of a large piped append (with a percentage bar when stdin
 * is a file) and the tables `read` and `ls` print on a TTY. Also the bash and zsh completion
 * scripts, run by the real shells.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startNode, tempDir, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, SVC_BIN, svc } from '../../helpers/svc-cli';

let node: NodeProcess;
const socket = `svc-cli-test-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });

beforeAll(async () => {
  node = await startNode();
});
afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
});

async function screenUntil(re: RegExp, ms = 40_000): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const screen = tmux('capture-pane', '-p', '-t', 'cli');
    if (re.test(screen)) return screen;
    if (Date.now() > until) throw new Error(`screen never matched ${re}:\n${screen}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('in a terminal, a large append shows a progress bar with its rate, and read and ls print tables', async () => {
  const dir = tempDir('svc-cli-tty-');
  const input = path.join(dir, 'records.txt');
  fs.writeFileSync(input, Array.from({ length: 300_000 }, (_, i) => `record number ${i} with some padding to make it longer`).join('\n') + '\n');
  const env = clientEnv({ SVC_URL: node.url });
  const exports = Object.entries({ SVC_URL: env['SVC_URL'], SVC_CONFIG_DIR: env['SVC_CONFIG_DIR'], SVC_NO_KEYRING: '1' }).map(([k, v]) => `export ${k}='${v}'`).join('; ');
  tmux('new-session', '-d', '-s', 'cli', '-x', '140', '-y', '45', 'bash', '--norc', '--noprofile');
  tmux('send-keys', '-t', 'cli', `${exports}; svc() { '${process.execPath}' '${SVC_BIN}' "$@"; }; clear`, 'Enter');
  tmux('send-keys', '-t', 'cli', `svc append /tty/a --create < '${input}'`, 'Enter');
  const afterAppend = await screenUntil(/appended 300000 records/);
  // The final progress line stays on screen: a full bar, the counts and the rate.
  expect(afterAppend).toMatch(/\[#{10,30}\] 100% 300,000 records, [\d.]+ MiB {2}[\d.]+k? rec\/s, [\d.]+ (KiB|MiB)\/s/);

  tmux('send-keys', '-t', 'cli', `clear; seq 1 200000 | svc append /tty/b --create`, 'Enter');
  const piped = await screenUntil(/appended 200000 records/);
  expect(piped).toMatch(/200,000 records, [\d.]+ (KiB|MiB) {2}[\d.]+k? rec\/s/); // no size known: no bar
  expect(piped).not.toMatch(/%/);

  tmux('send-keys', '-t', 'cli', 'clear; svc read /tty/a -n 3 -s 10', 'Enter');
  const table = await screenUntil(/SEQ\s+TIME\s+KEY\s+BODY[\s\S]*\n\s+12 /);
  expect(table).toMatch(/^\s+10 {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}- +record number 10 with some padding/m);

  tmux('send-keys', '-t', 'cli', 'clear; svc ls /tty/', 'Enter');
  const ls = await screenUntil(/\/tty\/b/);
  expect(ls).toMatch(/NAME\s+CONTENT_TYPE\s+START_SEQ\s+NEXT_SEQ\s+CLOSED/);
  expect(ls).toMatch(/\/tty\/a\s+application\/octet-stream\s+0\s+300000\s+false/);

  // login on a terminal asks for the token and does not echo it.
  const token = `${Buffer.from('tty-user').toString('base64url')}.${Buffer.alloc(32, 7).toString('base64url')}`;
  tmux('send-keys', '-t', 'cli', 'clear; svc login', 'Enter');
  await screenUntil(/Token for profile default:/); // capture-pane trims the trailing space
  tmux('send-keys', '-t', 'cli', '-l', token);
  tmux('send-keys', '-t', 'cli', 'Enter');
  const login = await screenUntil(/logged in to profile default as tty-user/);
  expect(login).not.toContain(token.split('.')[1]!);
});

test('bash and zsh completion scripts complete commands and flags from the command tree', async () => {
  const bash = (await svc(['completion', 'bash'])).stdout;
  const zsh = (await svc(['completion', 'zsh'])).stdout;
  const dir = tempDir('svc-cli-completion-');
  fs.writeFileSync(path.join(dir, 'c.bash'), bash);
  fs.writeFileSync(path.join(dir, 'c.zsh'), zsh);
  const complete = (line: string) =>
    execFileSync('bash', ['-c', `source c.bash; read -ra COMP_WORDS <<< "$1"; [[ "$1" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _svc_complete; echo "\${COMPREPLY[*]}"`, '_', line], { cwd: dir, encoding: 'utf8' }).trim();
  expect(complete('svc tok')).toBe('token');
  expect(complete('svc token ').split(' ')).toEqual(expect.arrayContaining(['issue', 'ls', 'revoke']));
  expect(complete('svc append /s --ke').split(' ')).toEqual(['--key', '--key-sep']);
  expect(complete('svc cluster node s')).toBe('slots');
  expect(complete('svc se').split(' ').sort()).toEqual(['seal', 'serve']);
  const zshWords = (words: string) =>
    execFileSync('zsh', ['-c', `compdef() { :; }; compadd() { shift; print -l -- "$@"; }; source ./c.zsh; words=(\${=1} ""); CURRENT=\${#words}; _svc`, '_', words], { cwd: dir, encoding: 'utf8' }).trim().split('\n');
  expect(zshWords('svc token')).toEqual(expect.arrayContaining(['issue', 'ls', 'revoke', '--token']));
  expect(zshWords('svc')).toEqual(expect.arrayContaining(['serve', 'append', 'tail', 'bench', 'completion']));
});

test('completion offers a flag\'s values after it, not flags', async () => {
  const dir = tempDir('svc-cli-completion-');
  fs.writeFileSync(path.join(dir, 'c.bash'), (await svc(['completion', 'bash'])).stdout);
  fs.writeFileSync(path.join(dir, 'c.zsh'), (await svc(['completion', 'zsh'])).stdout);
  const complete = (line: string) =>
    execFileSync('bash', ['-c', `source c.bash; read -ra COMP_WORDS <<< "$1"; [[ "$1" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _svc_complete; echo "\${COMPREPLY[*]}"`, '_', line], { cwd: dir, encoding: 'utf8' }).trim();
  expect(complete('svc ls -o ')).toBe('human json template=');
  expect(complete('svc read /s --output j')).toBe('json');
  expect(complete('svc read /s -f ')).toBe('raw json table');
  expect(complete('svc tail /s --group ')).toBe(''); // a free value: the shell's own (file) completion
  expect(complete('svc -o json to')).toBe('token'); // a flag's value is not taken for a command
  expect(complete('svc tail /s --gr')).toBe('--group');
  const zshWords = (words: string) =>
    execFileSync('zsh', ['-c', `compdef() { :; }; compadd() { shift; print -l -- "$@"; }; _files() { print FILES; }; source ./c.zsh; words=(\${=1} ""); CURRENT=\${#words}; _svc`, '_', words], { cwd: dir, encoding: 'utf8' }).trim().split('\n');
  expect(zshWords('svc tail /s -f')).toEqual(['raw', 'json', 'table']);
  expect(zshWords('svc tail /s --group')).toEqual(['FILES']);
});
