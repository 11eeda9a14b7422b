/**
 * Delivery against a real node: SIGKILL of the runtime mid-flow and a restart lose nothing
 * (generator source → node → file sink), duplicates bounded by one batch in all; a sink
 * that fails some records retries the retryable ones and dead-letters the permanent ones, and
 * its group's offset is committed past them only once the dead-letter topic acknowledged them;
 * a source whose checkpoint is missing warns that it restarts from the beginning.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

/** The seqs in the sink's file: whole lines only (the sink may be writing the last one while it is read). */
const seqs = (f: string): number[] => {
  if (!fs.existsSync(f)) return [];
  const text = fs.readFileSync(f, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);
};

describe('delivery', () => {
  let node: NodeProcess;
  let config: string;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`;
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('SIGKILL of the runtime mid-flow and a restart: every record arrives, duplicates bounded by one batch', async () => {
    const TOTAL = 20000;
    const BATCH = 200;
    const dir = writeRuntimeFiles({
      config,
      connectors: {
        'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "kill-flow"\n[plugin_config]\nrate = 4000\ncount = ${TOTAL}\n[batch]\nmax_records = ${BATCH}\n`,
        'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["kill-flow"]\n[plugin_config]\npath = "{dir}/out.jsonl"\n[batch]\nmax_records = ${BATCH}\n`,
      },
    });
    const out = path.join(dir, 'out.jsonl');
    const first = await startRuntime(dir);
    expect(first.output()).toContain('it starts from the beginning');
    await waitFor(() => seqs(out).length > 2000, 'some records in the sink', 60000);
    await first.kill();
    const before = seqs(out).length;
    expect(before).toBeLessThan(TOTAL);

    const second = await startRuntime(dir);
    expect(second.output()).not.toContain('it starts from the beginning');
    await waitFor(() => new Set(seqs(out)).size >= TOTAL, 'every record in the sink', 90000);
    const got = seqs(out);
    const unique = new Set(got);
    expect(unique.size).toBe(TOTAL);
    for (let i = 0; i < TOTAL; i++) if (!unique.has(i)) throw new Error(`seq ${i} lost`);
    // At-least-once: the sink may write its uncommitted chunk again; the source's in-flight batch
    // is found in the topic at the restart and not produced again. One batch at most.
    const duplicates = got.length - TOTAL;
    expect(duplicates).toBeLessThanOrEqual(BATCH);
    await second.stop();
  }, 180_000);

  test('a sink failing some records: retryable ones are retried, permanent ones go to the dead-letter topic before the commit', async () => {
    const dir = writeRuntimeFiles({ config, connectors: {} });
    const plugin = path.join(dir, 'picky-sink.js');
    // A JS plugin: "bad" records fail permanently; "flaky" ones fail once, then succeed.
    fs.writeFileSync(
      plugin,
      `const fs = require('node:fs');
       const seen = new Set();
       exports.createSink = () => { let file; return {
         async open(_ctx, c) { file = c.path; },
         async write(rs) { return rs.map((r) => { const v = r.value.toString();
           if (v.startsWith('bad')) return { status: 'permanent', message: 'bad record ' + v };
           if (v.startsWith('flaky') && !seen.has(v)) { seen.add(v); return { status: 'retryable', message: 'try again' }; }
           fs.appendFileSync(file, v + '\\n'); return { status: 'ok' }; }); },
         async flush() {}, async close() {} }; };`,
    );
    fs.writeFileSync(
      path.join(dir, 'connectors', 'picky.toml'),
      `type = "sink"\nkey = "picky"\npath = "${plugin}"\n[[topics]]\nnames = ["dlq-in"]\n[plugin_config]\npath = "${dir}/good.txt"\n[error]\nmax_attempts = 3\ninitial_backoff = "10ms"\nmax_backoff = "50ms"\ntolerance = "dlq"\ndlq_topic = "dlq-out"\n`,
    );
    const kafka = new Kafka({ clientId: 'dlq-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    const values = ['ok-1', 'bad-1', 'flaky-1', 'ok-2', 'bad-2', 'ok-3'];
    await producer.send({ topic: 'dlq-in', messages: values.map((value) => ({ value })) });
    await producer.disconnect();

    const rt = await startRuntime(dir);
    await waitFor(async () => (await (await fetch(`${rt.url}/metrics`)).text()).includes('svc_connector_dead_lettered_total{connector_key="picky"} 2'), 'two records dead-lettered');
    expect(fs.readFileSync(path.join(dir, 'good.txt'), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['flaky-1', 'ok-1', 'ok-2', 'ok-3']);
    const metrics = await (await fetch(`${rt.url}/metrics`)).text();
    expect(metrics).toContain('svc_connector_retries_total{connector_key="picky",connector_type="sink"} 1');
    expect(metrics).toContain('svc_connector_messages_processed_total{connector_key="picky"} 4');

    // The dead-letter topic holds the failed records with where they came from and why.
    const consumer = kafka.consumer({ groupId: 'dlq-reader', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'dlq-out', fromBeginning: true });
    const dead: { value: string; headers: Record<string, string> }[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void dead.push({ value: message.value!.toString(), headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])) }) });
    await waitFor(() => dead.length >= 2, 'two dead letters');
    await consumer.disconnect();
    expect(dead.map((d) => d.value)).toEqual(['bad-1', 'bad-2']);
    expect(dead[0]!.headers).toMatchObject({ 'svc-dlq-topic': 'dlq-in', 'svc-dlq-partition': '0', 'svc-dlq-offset': '1', 'svc-dlq-error': 'bad record bad-1', 'svc-dlq-connector': 'picky' });

    // The group committed past every record, failed ones included (they are in the DLQ).
    const admin = kafka.admin();
    await admin.connect();
    await waitFor(async () => (await admin.fetchOffsets({ groupId: 'svc-connect-sink-picky', topics: ['dlq-in'] }))[0]!.partitions[0]!.offset === '6', 'offset 6 committed');
    await admin.disconnect();
    await rt.stop();
  });

  test('a sink with no error tolerance stops at a permanent failure: status error, nothing committed past the record', async () => {
    const dir = writeRuntimeFiles({ config, connectors: {} });
    const plugin = path.join(dir, 'strict-sink.mjs');
    fs.writeFileSync(plugin, `export function createSink() { return { async open() {}, async write(rs) { return rs.map((r) => r.value.toString() === 'poison' ? { status: 'permanent', message: 'poison' } : { status: 'ok' }); }, async flush() {}, async close() {} }; }`);
    fs.writeFileSync(path.join(dir, 'connectors', 'strict.toml'), `type = "sink"\nkey = "strict"\npath = "${plugin}"\n[[topics]]\nnames = ["strict-in"]\n`);
    const kafka = new Kafka({ clientId: 'strict-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'strict-in', messages: ['a', 'b', 'poison', 'c'].map((value) => ({ value })) });
    await producer.disconnect();
    const rt = await startRuntime(dir);
    await waitFor(async () => ((await (await fetch(`${rt.url}/sinks/strict`)).json()) as { status: string }).status === 'error', 'the sink is in error');
    const s = (await (await fetch(`${rt.url}/sinks/strict`)).json()) as { last_error: { message: string } };
    expect(s.last_error.message).toContain('strict-in/0@2 failed: poison');
    const admin = kafka.admin();
    await admin.connect();
    expect((await admin.fetchOffsets({ groupId: 'svc-connect-sink-strict', topics: ['strict-in'] }))[0]!.partitions[0]!.offset).toBe('2');
    await admin.disconnect();
    await rt.stop();
  });
});
