/**
 * `--log-format` (docs/logs.md): the pretty line's shape, the auto choice, and the real thing: a
 * node started in a pseudo-terminal (`script`) writes coloured readable lines, with the request id
 * of an error reply on its line; started on a pipe it writes JSON.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createLogger, resolveLogFormat } from '../../src/log';
import { prettyLine } from '../../src/log-pretty';

const MAIN = path.join(__dirname, '..', '..', 'dist', 'main.js');
const ANSI = /\x1b\[[0-9;]*m/g; // eslint-disable-line no-control-regex

describe('the pretty line', () => {
  it('reads time, level, message, then key=value, with an error and its stack below', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (l) => void lines.push(l) }, 'pretty');
    const err = new Error('disk on fire');
    log.warn({ shard: 3, path: '/a b', token: 'secret', err }, 'append failed');
    expect(lines).toHaveLength(1);
    const [first, ...rest] = lines[0]!.trimEnd().split('\n');
    expect(first).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}append failed shard=3 path="\/a b" token="\[redacted\]" err="disk on fire"$/);
    expect(rest[0]).toMatch(/^ {4}at /);
  });

  it('passes a line that is not JSON through, and picks pretty for auto only on a terminal', () => {
    expect(prettyLine('not json', false)).toBe('not json\n');
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('writes JSON by default', () => {
    const lines: string[] = [];
    createLogger('info', { write: (l) => void lines.push(l) }).info({ a: 1 }, 'hi');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', a: 1, msg: 'hi' });
  });
});

describe('a node on a terminal and on a pipe', () => {
  const dirs: string[] = [];
  const procs: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(
      procs.map(async (p) => {
        if (p.exitCode === null && p.signalCode === null) {
          const gone = new Promise((r) => p.once('exit', r));
          p.kill('SIGTERM');
          await gone;
        }
      }),
    );
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** Starts `svc serve` (in a pseudo-terminal when `tty`) and resolves with its output so far once it has started. */
  function serve(tty: boolean, extra: string[] = []): Promise<{ out: () => string }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-logfmt-'));
    dirs.push(dir);
    const args = [MAIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dir, '--shards', '1', ...extra];
    const env = { ...process.env, SVC_RESERVE_BYTES: '0', NO_COLOR: '' };
    // script(1) runs the node with a pseudo-terminal as its stdout and copies what it prints to ours.
    const p = tty ? spawn('script', ['-qfec', [process.execPath, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] }) : spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(p);
    let out = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start:\n${out}`)), 20_000);
      p.stdout!.on('data', () => {
        if (!out.includes('node started')) return;
        clearTimeout(timer);
        resolve({ out: () => out });
      });
    });
  }

  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  }

  it('writes coloured readable lines on a terminal, the request id of an error on its line', async () => {
    const node = await serve(true);
    const started = node.out().split(/\r?\n/).find((l) => l.includes('node started'))!;
    expect(started).toContain('\x1b[32mINFO'); // coloured level
    const plain = started.replace(ANSI, '');
    expect(plain).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}node started engine=\w+ listen=127\.0\.0\.1:\d+ /);
    expect(plain).not.toContain('{');
    const admin = /admin=(127\.0\.0\.1:\d+)/.exec(plain)![1];
    const r = await fetch(`http://${admin}/admin/streams/nothing-here`);
    expect(r.status).toBe(404);
    const id = r.headers.get('svc-request-id')!;
    await until(() => node.out().includes(id));
    const line = node.out().replace(ANSI, '').split(/\r?\n/).find((l) => l.includes(id))!;
    expect(line).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  request answered with an error requestId=${id} listener=admin method=GET path=/admin/streams/nothing-here status=404 error=not_found$`));
  }, 30_000);

  it('writes JSON on a pipe, and readable lines without colour when told --log-format pretty', async () => {
    const json = await serve(false);
    const line = json.out().split('\n').find((l) => l.includes('node started'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 'info', msg: 'node started' });
    const pretty = await serve(false, ['--log-format', 'pretty']);
    const p = pretty.out().split('\n').find((l) => l.includes('node started'))!;
    expect(p).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}node started /);
    expect(p).not.toMatch(ANSI);
  }, 30_000);
});
