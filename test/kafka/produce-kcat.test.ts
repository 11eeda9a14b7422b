/**
 * kcat 1.7.1 (librdkafka 2.0.2) producing to and consuming from a node started by the test:
 * auto-created topics, acks=0/1/all, idempotence, the codecs librdkafka uses here (gzip, snappy,
 * zstd), each batch stored as sent and the records readable over HTTP (JSON, raw) and
 * Durable Streams (--ds-listen).
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { kcatConsume, kcatProduce } from './kcat';
import { servedBatches } from './stored-batches';

// lz4: librdkafka 2.0.2 compresses with lz4 only when the broker serves FindCoordinator v0 (its
// LZ4 feature check); until the listener serves consumer groups kcat sends lz4 batches
// uncompressed, so lz4 is covered by @platformatic/kafka (produce-platformatic.test.ts).
const CODECS = [
  ['gzip', 1],
  ['snappy', 2],
  ['zstd', 4],
] as const;

interface JsonRecord {
  seq: number;
  timestamp: number;
  key?: string;
  headers?: Record<string, string>;
  body?: string;
}

async function readJson(node: NodeProcess, stream: string): Promise<JsonRecord[]> {
  const res = await fetch(`${node.url}${stream}?count=10000&bytes=16777216`);
  expect(res.status).toBe(200);
  return (await res.json()) as JsonRecord[];
}

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kcat (librdkafka) producing to the Kafka listener', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('auto-creates the topic and keeps keys, values, headers and timestamps with acks=1 and acks=all', async () => {
    const before = Date.now();
    const one = await kcatProduce(node.kafka, 'kc-acks', ['k1:one', 'k2:two'], ['-X', 'acks=1', '-H', 'h1=x']);
    expect(one.code).toBe(0);
    const all = await kcatProduce(node.kafka, 'kc-acks', ['k3:three'], ['-X', 'acks=all', '-H', 'h2=y']);
    expect(all.code).toBe(0);
    const lines = await kcatConsume(node.kafka, 'kc-acks');
    expect(lines.map((l) => l.split('|').slice(0, 4))).toEqual([
      ['0', 'k1', 'one', 'h1=x'],
      ['1', 'k2', 'two', 'h1=x'],
      ['2', 'k3', 'three', 'h2=y'],
    ]);
    const ts = lines.map((l) => Number(l.split('|')[4]));
    for (const t of ts) expect(t).toBeGreaterThanOrEqual(before - 1000);
    // The same records over HTTP, with the producer's timestamps.
    const http = await readJson(node, '/kc-acks');
    expect(http.map((r) => [r.seq, r.key, r.body, r.headers, r.timestamp])).toEqual([
      [0, 'k1', 'one', { h1: 'x' }, ts[0]],
      [1, 'k2', 'two', { h1: 'x' }, ts[1]],
      [2, 'k3', 'three', { h2: 'y' }, ts[2]],
    ]);
  });

  test('with acks=0 the records still arrive, in order', async () => {
    const r = await kcatProduce(node.kafka, 'kc-acks0', ['a:1', 'b:2', 'c:3'], ['-X', 'acks=0']);
    expect(r.code).toBe(0);
    const http = await until(() => readJson(node, '/kc-acks0').catch(() => []), (v) => v.length === 3);
    expect(http.map((x) => x.body)).toEqual(['1', '2', '3']);
  });

  test('an idempotent producer writes each record once and stores its producer id', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `k${i}:idem-${i}`);
    const r = await kcatProduce(node.kafka, 'kc-idem', lines, ['-X', 'enable.idempotence=true', '-X', 'acks=all']);
    expect(r.code).toBe(0);
    const consumed = await kcatConsume(node.kafka, 'kc-idem');
    expect(consumed.map((l) => l.split('|')[2])).toEqual(lines.map((l) => l.split(':')[1]));
    const batches = await servedBatches(node.kafka, 'kc-idem');
    expect(batches.length).toBeGreaterThan(0);
    for (const b of batches) expect(b.producerId).toBeGreaterThanOrEqual(0n);
  });

  test.each(CODECS)('%s batches are stored as sent and read back by kcat, HTTP and Durable Streams', async (codec, id) => {
    const topic = `kc-${codec}`;
    // Compressible values: librdkafka sends a batch uncompressed when compression does not pay.
    const values = Array.from({ length: 300 }, (_, i) => `${codec}-value-${i}-` + 'abcdefgh'.repeat(20));
    const lines = values.map((v, i) => `key${i}:${v}`);
    const r = await kcatProduce(node.kafka, topic, lines, ['-z', codec, '-X', 'enable.idempotence=true', '-H', `codec=${codec}`]);
    expect(r.code).toBe(0);

    const batches = await servedBatches(node.kafka, topic);
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.map((b) => b.codec)).toEqual(batches.map(() => id));
    expect(batches.reduce((n, b) => n + b.records, 0)).toBe(300);

    const consumed = await kcatConsume(node.kafka, topic);
    expect(consumed.map((l) => l.split('|').slice(0, 4))).toEqual(values.map((v, i) => [String(i), `key${i}`, v, `codec=${codec}`]));

    const http = await readJson(node, `/${topic}`);
    expect(http.map((x) => [x.seq, x.key, x.body, x.headers])).toEqual(values.map((v, i) => [i, `key${i}`, v, { codec }]));
    expect(http.map((x) => x.timestamp)).toEqual(consumed.map((l) => Number(l.split('|')[4])));

    const raw = await fetch(`${node.url}/${topic}?format=raw&count=10000&bytes=16777216`);
    expect(await raw.text()).toBe(values.join(''));
    // A range that starts and ends inside compressed batches.
    const mid = await fetch(`${node.url}/${topic}?format=raw&seq=101&count=50`);
    expect(await mid.text()).toBe(values.slice(101, 151).join(''));
    const bin = await fetch(`${node.url}/${topic}?format=json&seq=150&count=3`);
    expect(((await bin.json()) as JsonRecord[]).map((x) => x.body)).toEqual(values.slice(150, 153));

    const ds = await fetch(`${node.dsUrl!}/v1/stream/${topic}?offset=-1`);
    expect(ds.status).toBe(200);
    expect(await ds.text()).toBe(values.join(''));
  });
});
