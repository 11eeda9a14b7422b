/**
 * JS plugins in their own worker thread, against a real node: a sink whose plugin throws out of
 * its calls (an uncaught exception), loops forever, or outgrows its heap limit fails only its
 * own connector (status error with the cause, a respawn with backoff, every record delivered
 * after it), while a healthy sink in the same runtime keeps running and the runtime stays up.
 * Each misbehaving plugin misbehaves once (it leaves a marker file first), so the respawned
 * worker delivers the records the failed one did not.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const lines = (f: string): string[] => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);

/** A sink plugin that appends values to `path`, after misbehaving once as `how` says. */
const plugin = (how: string): string => `
const fs = require('node:fs');
exports.createSink = () => { let c; return {
  async open(_ctx, config) { c = config; },
  async write(rs) {
    if (!fs.existsSync(c.marker)) {
      fs.writeFileSync(c.marker, 'x');
      ${how}
    }
    for (const r of rs) fs.appendFileSync(c.path, r.value.toString() + '\\n');
    return rs.map(() => ({ status: 'ok' }));
  },
  async flush() {}, async close() {} }; };`;

const MISBEHAVIOUR: Record<string, string> = {
  // Thrown outside any call: in the runtime's own thread this would end the process.
  thrower: `setTimeout(() => { throw new Error('boom from the plugin'); }, 0); await new Promise((r) => setTimeout(r, 1000));`,
  looper: `for (;;) {}`,
  hog: `const keep = []; for (;;) keep.push({ a: Math.random(), b: 'x'.repeat(64) + keep.length });`,
};

interface Stats {
  connectors: { key: string; status: string; plugin_restarts: number }[];
}

describe('JS plugin isolation', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a JS sink that throws, hangs or leaks fails only its connector, is respawned, and loses nothing', async () => {
    const config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`;
    const dir = writeRuntimeFiles({ config, connectors: {} });
    const keys = [...Object.keys(MISBEHAVIOUR), 'healthy'];
    for (const key of keys) {
      const file = path.join(dir, `${key}.js`);
      fs.writeFileSync(file, plugin(MISBEHAVIOUR[key] ?? ''));
      if (key === 'healthy') fs.writeFileSync(path.join(dir, `${key}.marker`), 'x');
      fs.writeFileSync(
        path.join(dir, 'connectors', `${key}.toml`),
        `type = "sink"\nkey = "${key}"\npath = "${file}"\nplugin_timeout = "2s"\nmemory_limit_mb = 32\n[[topics]]\nnames = ["iso-in"]\n[plugin_config]\npath = "${dir}/${key}.out"\nmarker = "${dir}/${key}.marker"\n`,
      );
    }
    const values = Array.from({ length: 300 }, (_, i) => `v${i}`);
    const kafka = new Kafka({ clientId: 'iso-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'iso-in', messages: values.map((value) => ({ value })) });
    await producer.disconnect();

    const rt = await startRuntime(dir);
    // Every sink, the misbehaving ones after their respawn, gets every record.
    for (const key of keys) await waitFor(() => new Set(lines(path.join(dir, `${key}.out`))).size === values.length, `every record in ${key}.out`, 90000);
    for (const key of keys) expect([...new Set(lines(path.join(dir, `${key}.out`)))].sort()).toEqual([...values].sort());

    const stats = (await (await fetch(`${rt.url}/stats`)).json()) as Stats;
    const byKey = new Map(stats.connectors.map((c) => [c.key, c]));
    for (const key of Object.keys(MISBEHAVIOUR)) {
      expect(byKey.get(key)!.plugin_restarts).toBeGreaterThanOrEqual(1);
      await waitFor(async () => ((await (await fetch(`${rt.url}/sinks/${key}`)).json()) as { status: string }).status === 'running', `${key} running again`);
    }
    expect(byKey.get('healthy')!.plugin_restarts).toBe(0);
    expect(byKey.get('healthy')!.status).toBe('running');

    // The cause of each failure is kept in last_error after the respawn.
    const lastError = async (key: string): Promise<string> => ((await (await fetch(`${rt.url}/sinks/${key}`)).json()) as { last_error: { message: string } }).last_error.message;
    expect(await lastError('thrower')).toContain('uncaught Error: boom from the plugin');
    expect(await lastError('looper')).toMatch(/write timed out after 2000 ms; the worker was terminated/);
    expect(await lastError('hog')).toContain('out of memory (heap limit 32 MiB)');
    expect(await (await fetch(`${rt.url}/metrics`)).text()).toContain('svc_connector_plugin_restarts_total{connector_key="looper",connector_type="sink"} 1');

    // The runtime itself never went down.
    expect(rt.proc.exitCode).toBeNull();
    expect(await rt.stop()).toBe(0);
  }, 150_000);

  test('a JS source runs in its worker: records with keys and headers arrive, its checkpoint is saved', async () => {
    const config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`;
    const dir = writeRuntimeFiles({ config, connectors: {} });
    const file = path.join(dir, 'count-source.mjs');
    fs.writeFileSync(
      file,
      `import { threadId } from 'node:worker_threads';
       export function createSource() { let next = 0, pending = null; return {
         async open(_ctx, _c, state) { next = state === null ? 0 : Number(state.toString()); },
         async poll(max, timeoutMs) {
           if (next >= 50) { await new Promise((r) => setTimeout(r, timeoutMs)); return null; }
           const n = Math.min(max, 50 - next); pending = next + n;
           return { state: Buffer.from(String(pending)), records: Array.from({ length: n }, (_, i) => ({ key: Buffer.from('k' + (next + i)), value: Buffer.from('s' + (next + i)), headers: { thread: String(threadId) } })) };
         },
         async commit(ack) { if (ack) next = pending; },
         async close() {} }; }`,
    );
    fs.writeFileSync(path.join(dir, 'connectors', 'count.toml'), `type = "source"\nkey = "count"\npath = "${file}"\n[[topics]]\nname = "iso-src"\n[batch]\nmax_records = 7\n`);
    const rt = await startRuntime(dir);
    await waitFor(() => fs.existsSync(path.join(dir, 'state', 'count.state')) && fs.readFileSync(path.join(dir, 'state', 'count.state'), 'utf8').includes('50'), 'checkpoint 50');
    const kafka = new Kafka({ clientId: 'iso-src-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'iso-src-reader', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'iso-src', fromBeginning: true });
    const got: { key: string; value: string; thread: string }[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void got.push({ key: message.key!.toString(), value: message.value!.toString(), thread: String(message.headers!['thread']) }) });
    await waitFor(() => got.length >= 50, '50 records');
    await consumer.disconnect();
    expect(got.map((g) => g.value)).toEqual(Array.from({ length: 50 }, (_, i) => `s${i}`));
    expect(got.every((g) => g.key === `k${g.value.slice(1)}`)).toBe(true);
    // The plugin did not run on the runtime's main thread (thread id 0).
    expect(new Set(got.map((g) => g.thread)).size).toBe(1);
    expect(got[0]!.thread).not.toBe('0');
    expect(await rt.stop()).toBe(0);
  }, 90_000);
});
