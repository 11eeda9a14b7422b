import { execFile, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const mainJs = path.join(root, 'dist', 'main.js');

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs the built `svc` binary with an environment free of SVC_* variables. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));

function svc(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [mainJs, ...args], { cwd: root, env, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(() => {
  // `npm test` has built already (pretest); build again so that running this file alone
  // tests the current sources. Incremental, so it is quick when nothing changed.
  spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
  expect(fs.existsSync(mainJs)).toBe(true);
});

describe('svc serve', () => {
  it('refuses a non-loopback listener with auth off: exit 2 and the reason on stderr', async () => {
    const run = await svc('serve', '--listen', '0.0.0.0:0');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--listen: 0.0.0.0 is not a loopback address; auth is off');
    expect(run.stderr).toContain('--insecure-allow-remote');
    expect(run.stdout).toBe('');
  });

  it('prints every configuration error before exiting 2', async () => {
    const run = await svc('serve', '--shards', '0', '--nope');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--shards: must be an integer from 1 to 1024');
    expect(run.stderr).toContain('--nope: unknown flag');
  });

  it('logs its listening addresses, then stops cleanly with exit 0 on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-main-'));
    const child = spawn(process.execPath, [mainJs, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--data-dir', dataDir, '--shard-workers', '1', '--http-engine', 'node'], { cwd: root, env });
    try {
      let out = '';
      const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n').find((l) => l.includes('svc listening on'));
          if (line) resolve(JSON.parse(line) as Record<string, unknown>);
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
      });
      const line = await listening;
      expect(line.listen).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
      expect(line.admin).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).toContain('"msg":"shutting down"');
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('prints usage generated from the config schema for serve --help', async () => {
    const run = await svc('serve', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--data-dir <dir>');
    expect(run.stdout).toContain('SVC_DATA_DIR');
    expect(run.stdout).toContain('default 127.0.0.1:4437');
    expect(run.stdout).toContain('--admin, --no-admin');
  });
});

describe('svc', () => {
  it('lists the commands and the serve flags with their environment variables for --help', async () => {
    const run = await svc('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: svc <command>/);
    expect(run.stdout).toContain('serve   start a stream node');
    expect(run.stdout).toContain('check   verify every segment and index of a stopped node (offline)');
    expect(run.stdout).toContain('repair  quarantine damaged frames of a stopped node so that it starts again (offline)');
    expect(run.stdout).toContain('--data-dir');
    expect(run.stdout).toContain('SVC_DATA_DIR');
  });

  it('prints the package version for --version', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const run = await svc('--version');
    expect(run).toEqual({ code: 0, stdout: `svc ${pkg.version}\n`, stderr: '' });
  });

  it('answers an unknown command or no command with usage on stderr and exit 2', async () => {
    const unknown = await svc('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage: svc <command>');
    const none = await svc();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: svc <command>');
  });
});
