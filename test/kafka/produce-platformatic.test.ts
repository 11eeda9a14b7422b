/**
 * @platformatic/kafka 1.35 against a node started by the test: create topic, auto-create,
 * produce with acks=1, acks=all and idempotence, the codecs it has on Node 20 (gzip, snappy, lz4;
 * its zstd needs node:zlib's zstd, Node ≥ 22.15), consume back, delete the topic.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { platformatic } from './platformatic';
import { servedBatches } from './stored-batches';

describe('@platformatic/kafka 1.35 producing to the Kafka listener', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('creates a topic, produces with acks=1 and acks=all, consumes the records back and deletes the topic', async () => {
    const created = await platformatic({ op: 'admin', broker: node.kafka, create: [{ topic: 'pf-basic', partitions: 2 }] });
    expect(created).toMatchObject({ ok: true });
    expect(created.topics).toContain('pf-basic');
    const one = await platformatic({ op: 'produce', broker: node.kafka, topic: 'pf-basic', acks: 1, messages: [{ key: 'k1', value: 'one', headers: { h: 'x' } }, { key: 'k2', value: 'two' }] });
    expect(one).toEqual({ ok: true, offsets: [{ partition: 0, offset: '0' }] });
    const all = await platformatic({ op: 'produce', broker: node.kafka, topic: 'pf-basic', acks: -1, messages: [{ key: 'k3', value: 'three' }] });
    expect(all).toEqual({ ok: true, offsets: [{ partition: 0, offset: '2' }] });
    const read = await platformatic({ op: 'consume', broker: node.kafka, topic: 'pf-basic' });
    expect(read.records!.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual([
      ['0', 'k1', 'one', { h: 'x' }],
      ['1', 'k2', 'two', {}],
      ['2', 'k3', 'three', {}],
    ]);
    const deleted = await platformatic({ op: 'admin', broker: node.kafka, delete: ['pf-basic'] });
    expect(deleted.ok).toBe(true);
    expect(deleted.topics).not.toContain('pf-basic');
    expect((await fetch(`${node.url}/pf-basic`, { method: 'HEAD' })).status).toBe(404);
    expect((await fetch(`${node.url}/pf-basic/1`, { method: 'HEAD' })).status).toBe(404);
  });

  test('auto-creates a topic on produce', async () => {
    const r = await platformatic({ op: 'produce', broker: node.kafka, topic: 'pf-auto', autocreate: true, messages: [{ key: 'a', value: 'auto' }] });
    expect(r).toEqual({ ok: true, offsets: [{ partition: 0, offset: '0' }] });
    expect((await fetch(`${node.url}/pf-auto`, { method: 'HEAD' })).headers.get('svc-next-seq')).toBe('1');
  });

  test.each([
    ['none', 0],
    ['gzip', 1],
    ['snappy', 2],
    ['lz4', 3],
  ] as const)('an idempotent producer with %s: batches stored as sent, consumed back, readable over HTTP', async (compression, codec) => {
    const topic = `pf-${compression}`;
    const values = Array.from({ length: 40 }, (_, i) => `${compression}-${i}-` + 'xyz'.repeat(40));
    for (let round = 0; round < 2; round++) {
      const part = values.slice(round * 20, round * 20 + 20);
      const r = await platformatic({ op: 'produce', broker: node.kafka, topic, autocreate: true, idempotent: true, compression, messages: part.map((v, i) => ({ key: `k${round * 20 + i}`, value: v, headers: { c: compression } })) });
      expect(r).toEqual({ ok: true, offsets: [{ partition: 0, offset: String(round * 20) }] });
    }
    const batches = await servedBatches(node.kafka, topic);
    expect(batches.map((b) => [b.baseOffset, b.codec, b.records])).toEqual([[0, codec, 20], [20, codec, 20]]);
    // Each producer (one per client run) got its own id from InitProducerId.
    expect(batches[0]!.producerId).toBeGreaterThanOrEqual(0n);
    expect(batches[1]!.producerId).not.toBe(batches[0]!.producerId);
    const read = await platformatic({ op: 'consume', broker: node.kafka, topic });
    expect(read.records!.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual(values.map((v, i) => [String(i), `k${i}`, v, { c: compression }]));
    const http = (await (await fetch(`${node.url}/${topic}?count=100`)).json()) as Array<{ seq: number; key: string; body: string; headers: Record<string, string> }>;
    expect(http.map((r) => [r.seq, r.key, r.body, r.headers])).toEqual(values.map((v, i) => [i, `k${i}`, v, { c: compression }]));
  });
});
