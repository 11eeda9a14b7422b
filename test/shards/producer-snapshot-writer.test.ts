/**
 * The owner's producer snapshots (producer-snapshot-writer.ts): due once a stream's recorded
 * entries grew by the interval; the table and seq read together; inline when small, else an
 * object named in the same record; left for later while the producers are replayed or the stream
 * is being sealed; dropped when fenced; due again after a failure.
 */
import { type ProducerSnapshotRecord } from '../../src/objects';
import { decodeProducerSnapshot } from '../../src/shards/worker/producer-snapshot';
import { ProducerSnapshotWriter } from '../../src/shards/worker/producer-snapshot-writer';
import { type ProducerTable, encodeProducers, recordProducer } from '../../src/shards/worker/producers';
import { type StreamState } from '../../src/shards/worker/stream-state';

const EVERY = 1000;

function stream(name: string, producers: number): StreamState {
  const table: ProducerTable = new Map();
  for (let i = 0; i < producers; i++) recordProducer(table, `h:${i}`, 1, { seq: 0, start: i, next: i + 1, ts: 0 }, 100_000);
  return { meta: { name }, deleted: false, closing: false, nextSeq: producers, durableProducers: table, ledger: { fence: { nodeId: 1, epoch: 3 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null, placedIn: null } } as unknown as StreamState;
}

function harness(answer: () => boolean | Error = () => true) {
  const recorded: Array<{ stream: string; fence: { nodeId: number; epoch: number }; rec: ProducerSnapshotRecord }> = [];
  const puts = new Map<string, Buffer>();
  const writer = new ProducerSnapshotWriter({
    store: {
      put: async (key, body) => void puts.set(key, body),
      list: async function* (prefix) {
        for (const key of puts.keys()) if (key.startsWith(prefix)) yield { key };
      },
    },
    ledger: {
      recordProducerSnapshot: async (s, fence, rec) => {
        const a = answer();
        if (a instanceof Error) throw a;
        if (a) recorded.push({ stream: s, fence, rec });
        return a;
      },
    },
    nodeId: 1,
    nodeEpoch: 9,
    shardId: 2,
    everyBytes: EVERY,
  });
  return { writer, recorded, puts };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('producer snapshots of the owner', () => {
  it('writes one each time the recorded entries grew by the interval, with the table as of the stream\'s next seq, inline when small', async () => {
    const { writer, recorded, puts } = harness();
    const s = stream('/a', 3);
    writer.recorded(s, 600);
    await settle();
    expect(recorded).toEqual([]);
    writer.recorded(s, 400);
    await settle();
    expect(recorded).toEqual([{ stream: '/a', fence: { nodeId: 1, epoch: 3 }, rec: { seq: 3, producers: encodeProducers(s.durableProducers) } }]);
    expect(puts.size).toBe(0);
    // The count starts again.
    writer.recorded(s, 999);
    await settle();
    expect(recorded).toHaveLength(1);
  });

  it('puts a large table into an object numbered after those of this run already in the store', async () => {
    const { writer, recorded, puts } = harness();
    puts.set('p/1/9/2/000000000004', Buffer.alloc(0)); // a worker started again in the same node epoch
    const s = stream('/big', 500);
    writer.recorded(s, EVERY);
    await settle();
    await settle();
    expect(recorded).toHaveLength(1);
    const rec = recorded[0]!.rec;
    expect(rec).toMatchObject({ seq: 500, o: 'p/1/9/2/000000000005' });
    expect(rec.producers).toBeUndefined();
    const body = puts.get(rec.o!)!;
    expect(rec.bytes).toBe(body.length);
    expect(encodeProducers(decodeProducerSnapshot(body, 'test').producers)).toEqual(encodeProducers(s.durableProducers));
  });

  it('waits while the producers are being replayed or the stream is being sealed, and skips a moved or deleted stream', async () => {
    const { writer, recorded } = harness();
    const replaying = stream('/replaying', 1);
    replaying.remote = { producersPending: [] } as unknown as StreamState['remote'];
    const sealing = stream('/sealing', 1);
    sealing.closing = true;
    const moved = stream('/moved', 1);
    moved.ledger!.moved = { nodeId: 2 };
    const deleted = stream('/deleted', 1);
    deleted.deleted = true;
    for (const s of [replaying, sealing, moved, deleted]) writer.recorded(s, EVERY);
    await settle();
    expect(recorded).toEqual([]);
    // The replay is done: the next commit of the stream brings it back.
    replaying.remote = { producersPending: null } as unknown as StreamState['remote'];
    writer.recorded(replaying, 1);
    await settle();
    expect(recorded.map((r) => r.stream)).toEqual(['/replaying']);
  });

  it('is due again at the next commit after a failure, and drops a snapshot the fence refuses', async () => {
    let answer: boolean | Error = new Error('etcd did not answer');
    const { writer, recorded } = harness(() => answer);
    const s = stream('/a', 2);
    writer.recorded(s, EVERY);
    await settle();
    expect(recorded).toEqual([]);
    answer = true;
    writer.recorded(s, 1);
    await settle();
    expect(recorded).toHaveLength(1);
    answer = false;
    writer.recorded(s, EVERY);
    await settle();
    expect(writer.written).toBe(1);
  });
});
