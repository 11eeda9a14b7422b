/**
 * Producer state across a move without a copy (src/shards/worker/producer-snapshot.ts): a
 * snapshot of the durable producer table as of a seq plus the replay of the batches after it
 * gives the table the old owner had, eviction included, so a retried append after the move is
 * answered as a duplicate with its original seqs, and the next one is accepted.
 */
import { type SvcError } from '../../src/errors';
import { type ProducerTable, checkProducer, encodeProducers, producerIdOf, recordBatchProducer } from '../../src/shards/worker/producers';
import { decodeProducerSnapshot, encodeProducerSnapshot, replayProducers } from '../../src/shards/worker/producer-snapshot';
import { type RemoteBatch } from '../../src/shards/worker/remote-chunks';
import { readBatchHeader, encodeRecordBatch } from '../../src/util/record-batch';

const MAX = 3;

/** Appends of HTTP producers p0..p4 (one sequence per append) and a Kafka producer (one per record), as batches. */
function history(): RemoteBatch[] {
  const out: RemoteBatch[] = [];
  const seqOf = new Map<string, number>();
  let at = 0;
  for (let i = 0; i < 40; i++) {
    const kafka = i % 7 === 3;
    const id = kafka ? 'kafka' : `p${i % 5}`;
    const n = kafka ? 3 : 1 + (i % 2);
    const seq = seqOf.get(id) ?? 0;
    seqOf.set(id, seq + (kafka ? n : 1));
    const records = Array.from({ length: n }, () => ({ key: null, value: Buffer.from(`r${at}`), headers: null }));
    const producerId = kafka ? 42n : producerIdOf(id);
    const batch = Buffer.from(encodeRecordBatch({ baseOffset: at, baseTimestamp: 1_700_000_000_000 + i, records, producerId, producerEpoch: 1, baseSequence: seq }));
    out.push({ batch, baseSeq: at, lastSeq: at + n - 1 });
    at += n;
  }
  return out;
}

/** What the old owner's durable table is after `batches` (stream-writes.ts applies each in log order). */
function applied(batches: RemoteBatch[]): ProducerTable {
  const t: ProducerTable = new Map();
  for (const b of batches) recordBatchProducer(t, readBatchHeader(b.batch, 0), b.baseSeq, MAX);
  return t;
}

it('a snapshot at a seq plus the replay of the later batches is the old owner\'s table', () => {
  const all = history();
  const old = applied(all);
  for (const cut of [0, 10, 25, all.length]) {
    const snapSeq = cut < all.length ? all[cut]!.baseSeq : all[all.length - 1]!.lastSeq + 1;
    const snap = decodeProducerSnapshot(encodeProducerSnapshot(applied(all.slice(0, cut)), snapSeq), 'p/test');
    expect(snap.seq).toBe(snapSeq);
    // The entries read after the snapshot may begin below its seq (an entry is not cut there): those batches are skipped.
    const n = replayProducers(snap.producers, all.slice(Math.max(0, cut - 2)), snapSeq, MAX);
    expect(n).toBe(all.length - cut);
    expect(encodeProducers(snap.producers)).toEqual(encodeProducers(old));
  }
  expect(old.size).toBe(MAX); // eviction happened, and replay reproduced it
});

it('a retried append after the move is a duplicate with its original seqs; the next is accepted', () => {
  const all = history();
  const moved = decodeProducerSnapshot(encodeProducerSnapshot(applied(all.slice(0, 20)), all[20]!.baseSeq), 'p/test').producers;
  replayProducers(moved, all.slice(20), all[20]!.baseSeq, MAX);
  const last = all[all.length - 1]!;
  const h = readBatchHeader(last.batch, 0);
  const key = h.producerId.toString();
  const dup = checkProducer(moved, key, 1, h.baseSequence);
  expect(dup).toEqual({ kind: 'duplicate', ack: { seq: h.baseSequence, start: last.baseSeq, next: last.lastSeq + 1, ts: h.baseTimestamp }, lastSeq: expect.any(Number) as number });
  const dupLast = (dup as { lastSeq: number }).lastSeq;
  expect(checkProducer(moved, key, 1, dupLast + 1)).toEqual({ kind: 'append' });
});

it('a damaged snapshot is data_corrupt naming it', () => {
  for (const bad of ['{', '{"v":2,"seq":0,"producers":[]}', '{"v":1,"seq":-1,"producers":[]}', '{"v":1,"seq":1,"producers":[["k",1]]}']) {
    let err: SvcError | undefined;
    try {
      decodeProducerSnapshot(Buffer.from(bad), 'object p/1/0000000001.000000000001');
    } catch (e) {
      err = e as SvcError;
    }
    expect(err?.code).toBe('data_corrupt');
    expect(err?.message).toContain('p/1/0000000001');
  }
});
