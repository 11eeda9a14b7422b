/**
 * A short run of the soak (perf/s3/soak.js; the full one is 10 minutes, perf/s3/README.md): 64
 * keep-alive clients against svc-cache in front of s3rver for 15 s (some idling across the
 * server's keep-alive timeout), mixed GET hits and misses,
 * ranges, HEADs, conditionals and PUTs, no fault injected. No connection may be reset, no request
 * may fail, no file handle may be left to the collector, and svc-cache's open descriptors must
 * come back to where they were. Runs the built program: `npm run build` first.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

jest.setTimeout(58_000);

interface Summary {
  requests: number;
  resets: number;
  transportErrors: number;
  transport: Record<string, number>;
  unexpected: number;
  unexpectedSample: unknown[];
  gcWarnings: number;
  byOp: Record<string, number>;
  fds: { baseline: number; after: number; max: number };
  keepAlive: string | null;
  pauses: number;
  pass: boolean;
}

describe('svc-cache soak (short)', () => {
  it('serves 64 keep-alive clients a mixed load with no reset, no failed request and no leaked descriptor', async () => {
    const script = path.resolve(__dirname, '..', '..', 'perf', 's3', 'soak.js');
    const child = spawn(process.execPath, [script, '--duration', '15', '--clients', '64', '--json'], {
      env: { ...process.env, SOAK_ORIGIN: 's3rver', SOAK_SAMPLE_S: '2', SOAK_OBJECTS: '100', SOAK_PAUSE: '0.01', SOAK_ENGINE: process.env.SVC_CACHE_SERVER_ENGINE === 'node' ? 'node' : 'uws' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`soak printed no summary (exit ${code}):\n${err}`);
    const s = JSON.parse(line) as Summary;
    expect(s.transport).toEqual({});
    expect(s.resets).toBe(0);
    expect(s.unexpectedSample).toEqual([]);
    expect(s.unexpected).toBe(0);
    expect(s.gcWarnings).toBe(0);
    expect(s.fds.after).toBeLessThanOrEqual(s.fds.baseline);
    // The load really ran: every kind of request, in numbers.
    expect(s.requests).toBeGreaterThan(500);
    for (const op of ['get', 'range', 'head', 'conditional', 'miss', 'put']) expect(s.byOp[op]).toBeGreaterThan(0);
    // Clients that honour the hint retire idle connections before the server closes them.
    if (process.env.SVC_CACHE_SERVER_ENGINE !== 'node') expect(s.keepAlive).toBe('timeout=5');
    expect(s.pauses).toBeGreaterThan(0);
    expect(s.pass).toBe(true);
    expect(code).toBe(0);
  });
});
