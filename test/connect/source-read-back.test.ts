/**
 * A source's crash between the produce and the checkpoint save costs no duplicate, against a
 * real node: the checkpoint store (an HTTP one, here) holds the fourth save forever, the runtime
 * is killed with SIGKILL while it waits (the fourth batch is in the topic, its checkpoint is
 * not), and after the restart the runtime reads the partition from the checkpoint's offset,
 * finds the fourth batch by its `svc-source` headers and does not produce it again: the topic
 * holds every record exactly once.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { decodeCheckpoint } from '../../src/connect';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

describe('source read-back after a crash', () => {
  let node: NodeProcess;
  let store: http.Server;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    store?.closeAllConnections();
    store?.close();
    await node?.stop();
  });

  test('SIGKILL after the produce and before the checkpoint: the batch is not produced again', async () => {
    const TOTAL = 1000;
    const BATCH = 100;
    const saved = new Map<string, Buffer>();
    let puts = 0;
    let hold = true;
    let held = false;
    store = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'PUT') {
          // The fourth save never answers while `hold` is on: the runtime dies waiting for it.
          if (hold && ++puts === 4) return void (held = true);
          saved.set(req.url!, Buffer.concat(chunks));
          return void res.writeHead(204).end();
        }
        const v = saved.get(req.url!);
        if (v === undefined) res.writeHead(404).end();
        else res.writeHead(200).end(v);
      });
    });
    await new Promise<void>((r) => store.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(store.address() as AddressInfo).port}/cp/`;
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\nstorage = "http"\n[state.http]\nurl = "${url}"\ntimeout = "60s"\n`,
      connectors: { 'gen.toml': `type = "source"\nkey = "rb"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "read-back"\n[plugin_config]\nrate = 0\ncount = ${TOTAL}\n[batch]\nmax_records = ${BATCH}\n` },
    });
    const first = await startRuntime(dir);
    await waitFor(() => held, 'the fourth checkpoint save is held');
    await first.kill();
    // Three checkpoints were saved; the fourth batch is in the topic all the same.
    const cp = decodeCheckpoint(saved.get('/cp/rb')!);
    expect(cp.state.toString()).toBe(JSON.stringify({ next: 3 * BATCH }));
    expect(cp.position?.seq).toBe(3 * BATCH);
    const count = async (): Promise<number> => ((await (await fetch(`${node.url}/read-back?format=json`)).json()) as unknown[]).length;
    expect(await count()).toBe(4 * BATCH);

    hold = false;
    const second = await startRuntime(dir);
    await waitFor(() => decodeCheckpoint(saved.get('/cp/rb')!).state.toString() === JSON.stringify({ next: TOTAL }), 'the checkpoint reaches the end');
    expect(second.output()).toContain('records produced after the last checkpoint are in the topic already');
    expect(second.output()).toContain('"records":100');
    await second.stop();

    // Every record exactly once, each with its source header.
    const kafka = new Kafka({ clientId: 'read-back-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'read-back-reader', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'read-back', fromBeginning: true });
    const got: { seq: number; header: string }[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void got.push({ seq: (JSON.parse(message.value!.toString()) as { seq: number }).seq, header: String(message.headers!['svc-source']) }) });
    await waitFor(() => got.length >= TOTAL, 'every record read');
    await new Promise((r) => setTimeout(r, 500));
    await consumer.disconnect();
    expect(got.map((g) => g.seq)).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
    expect(got.map((g) => g.header)).toEqual(Array.from({ length: TOTAL }, (_, i) => `rb@${i}`));
  }, 120_000);
});
