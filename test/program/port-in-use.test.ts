/**
 * One process per port (src/program/http/README.md, "One process per port"): a second svc,
 * svc-cache or svc-connectors started on a port another process listens on exits non-zero with an
 * error that names the listener and the port, instead of sharing it (uWS binds with SO_REUSEPORT
 * unless told not to, and the kernel would split the clients between the two processes). The
 * I/O threads of one node still share their listener's port (test/gateway/http/io-threads.test.ts).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ROOT, MAIN, type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { startRuntime, writeRuntimeFiles } from '../connect/helpers/runtime-process';

const CACHE_BIN = path.join(ROOT, 'bin', 'svc-cache');
const CONNECTORS_MAIN = path.join(ROOT, 'dist', 'connect', 'main.js');

jest.setTimeout(120_000);

/** Runs a command that should fail at startup; resolves with its exit code and everything it printed. */
function runToExit(args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): Promise<{ code: number | null; output: string }> {
  const proc = spawn(process.execPath, args, { cwd, env: { ...process.env, SVC_RESERVE_BYTES: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

const portOf = (url: string): number => Number(new URL(url.includes('://') ? url : `http://${url}`).port);

/** `svc serve` with every listener on a free port except those given. */
function serve(over: Record<string, string>, engine: 'uws' | 'node' = 'uws', extra: string[] = []): Promise<{ code: number | null; output: string }> {
  const flags: Record<string, string> = { '--listen': '127.0.0.1:0', '--admin-listen': '127.0.0.1:0', '--kafka-listen': '127.0.0.1:0', ...over };
  return runToExit([MAIN, 'serve', ...Object.entries(flags).flat(), '--data-dir', tempDir(), '--http-engine', engine, '--shards', '1', '--shard-workers', '1', ...extra]);
}

function expectRefused(r: { code: number | null; output: string }, listener: string, port: number): void {
  expect(r.code).not.toBe(0);
  expect(r.code).not.toBeNull();
  expect(r.output).toContain(`${listener} cannot listen on 127.0.0.1:${port}: port ${port} is in use by another process (EADDRINUSE)`);
}

describe('svc', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--ds-listen', '127.0.0.1:0', '--shards', '1', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test.each(['uws', 'node'] as const)('a second node (%s engine) on a busy protocol, admin, Durable Streams or Kafka port exits with an error naming the port', async (engine) => {
    const cases: Array<[string, string, number]> = [
      ['--listen', 'protocol listener (--listen)', portOf(node.url)],
      ['--admin-listen', 'admin listener (--admin-listen)', portOf(node.adminUrl!)],
      ['--ds-listen', 'Durable Streams listener (--ds-listen)', portOf(node.dsUrl!)],
      ['--kafka-listen', 'Kafka listener (--kafka-listen)', portOf(node.kafka)],
    ];
    for (const [flag, listener, port] of cases) expectRefused(await serve({ [flag]: `127.0.0.1:${port}` }, engine), listener, port);
    // The first node serves on, alone.
    expect((await fetch(`${node.url}/after-refusals-${engine}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  });

  test('with --sse-threads, on either side: refused as well, and the threads of one node still share its port', async () => {
    const threaded = await startNode({ args: ['--sse-threads', '2', '--shards', '1', '--shard-workers', '1'] });
    try {
      // The threads serve (several connections land on them) ...
      for (let i = 0; i < 4; i++) expect((await fetch(`${threaded.url}/t${i}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
      // ... and neither a plain node nor one with threads may join their port.
      const port = portOf(threaded.url);
      expectRefused(await serve({ '--listen': `127.0.0.1:${port}` }), 'protocol listener (--listen)', port);
      expectRefused(await serve({ '--listen': `127.0.0.1:${port}` }, 'uws', ['--sse-threads', '2']), 'protocol listener (--listen)', port);
      // Nor may a node with threads join a plain node's port.
      expectRefused(await serve({ '--listen': `127.0.0.1:${portOf(node.url)}` }, 'uws', ['--sse-threads', '2']), 'protocol listener (--listen)', portOf(node.url));
    } finally {
      await threaded.stop();
    }
  });
});

describe('svc-cache', () => {
  test.each(['uws', 'node'] as const)('a second svc-cache (%s engine) on a busy port exits with an error naming the port', async (engine) => {
    const dir = tempDir('svc-cache-port-');
    const env = { SVC_CACHE_SERVER_ENGINE: engine, SVC_CACHE_ORIGIN_ENDPOINT: 'http://127.0.0.1:1', SVC_CACHE_CACHE_DIR: dir };
    const first = spawn(process.execPath, [CACHE_BIN], { env: { ...process.env, ...env, SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0', SVC_CACHE_METRICS_LISTEN: '127.0.0.1:0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    first.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    first.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
    try {
      const started = await new Promise<{ listen: string; metrics: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`svc-cache did not start:\n${out}`)), 20_000);
        first.stdout!.on('data', () => {
          const line = out.split('\n').find((l) => l.includes('"svc-cache started"'));
          if (line === undefined) return;
          clearTimeout(timer);
          resolve(JSON.parse(line) as { listen: string; metrics: string });
        });
      });
      const port = portOf(started.listen);
      const metricsPort = portOf(started.metrics);
      const second = await runToExit([CACHE_BIN], { ...env, SVC_CACHE_CACHE_DIR: tempDir('svc-cache-port-'), SVC_CACHE_SERVER_LISTEN: `127.0.0.1:${port}`, SVC_CACHE_METRICS_LISTEN: '' });
      expectRefused(second, 'svc-cache listener (server.listen)', port);
      const third = await runToExit([CACHE_BIN], { ...env, SVC_CACHE_CACHE_DIR: tempDir('svc-cache-port-'), SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0', SVC_CACHE_METRICS_LISTEN: `127.0.0.1:${metricsPort}` });
      expectRefused(third, 'svc-cache metrics listener (metrics.listen)', metricsPort);
      expect(await (await fetch(`http://127.0.0.1:${port}/-/health`)).text()).toBe('ok');
    } finally {
      first.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

describe('svc-connectors', () => {
  test('a second svc-connectors on a busy API port exits with an error naming the port', async () => {
    const config = `[kafka]\nbootstrap_servers = "127.0.0.1:1"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`;
    const first = await startRuntime(writeRuntimeFiles({ config, connectors: {} }));
    try {
      const port = portOf(first.url);
      const dir = writeRuntimeFiles({ config, connectors: {} });
      const second = await runToExit([CONNECTORS_MAIN], { SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml'), SVC_CONNECTORS_HTTP__ADDRESS: `127.0.0.1:${port}` }, dir);
      expectRefused(second, 'svc-connectors API listener (http.address)', port);
      expect((await fetch(`${first.url}/healthz`)).status).toBeLessThan(500);
    } finally {
      await first.stop();
    }
  });
});
