/** The svc-cache command as users start it: bin/svc-cache over dist/ (built by `npm test`'s pretest). */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './helpers/origin';

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'svc-cache');

describe('the svc-cache command', () => {
  it('reports every configuration error at once and exits with status 2', () => {
    const r = spawnSync(process.execPath, [BIN], {
      env: { PATH: process.env.PATH, SVC_CACHE_POPULATE_MAX: 'lots', SVC_CACHE_SERVER_LISTEN: 'nowhere', SVC_CACHE_AUTH_MODE: 'static' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('SVC_CACHE_POPULATE_MAX');
    const second = spawnSync(process.execPath, [BIN], { env: { PATH: process.env.PATH, SVC_CACHE_SERVER_LISTEN: 'nowhere', SVC_CACHE_AUTH_MODE: 'static' }, encoding: 'utf8' });
    expect(second.status).toBe(2);
    expect(second.stderr).toContain('server.listen');
    expect(second.stderr).toContain('origin.endpoint');
    expect(second.stderr).toContain('auth: mode = "static"');
  });

  it('starts, answers its health check, warns loudly about anonymous auth beyond loopback, and stops on SIGTERM', async () => {
    const dir = tempDir('svc-cache-cli-');
    const proc = spawn(process.execPath, [BIN], {
      env: { PATH: process.env.PATH, SVC_CACHE_SERVER_LISTEN: '0.0.0.0:0', SVC_CACHE_METRICS_LISTEN: '127.0.0.1:0', SVC_CACHE_ORIGIN_ENDPOINT: 'http://127.0.0.1:1', SVC_CACHE_CACHE_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      const started = await new Promise<{ listen: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`did not start:\n${out}`)), 15_000);
        proc.stdout!.on('data', () => {
          const line = out.split('\n').find((l) => l.includes('"svc-cache started"'));
          if (line) {
            clearTimeout(timer);
            resolve(JSON.parse(line) as { listen: string });
          }
        });
      });
      expect(out).toMatch(/"level":"warn".*anonymous auth and no TLS/);
      const port = new URL(started.listen).port;
      const health = await fetch(`http://127.0.0.1:${port}/-/health`);
      expect(await health.text()).toBe('ok');
    } finally {
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
