/**
 * A batch given up with its own buffer (`ownBuffer`: a Kafka listener's large request frame)
 * crosses to the shard worker without a copy, is framed in place there, and the buffer comes
 * back through `ShardClient.onReturnedBuffer` once the frame is written and applied (for the
 * listener's FramePool). Real workers from dist/ (import-fixture.ts).
 */
import { encodeRecordBatch, splitBatches } from '../../src/util/record-batch';
import { tempDir } from '../helpers/node-process';
import { type ShardClient, createStream, readAll, startShards } from './helpers/import-fixture';

const value = Buffer.alloc(200, 0x62);
const batch = (n: number): Buffer => encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1_700_000_000_000, records: Array.from({ length: n }, () => ({ key: null, value, headers: null })) });

/** `b` in a buffer of its own, after `before` bytes of something else, as a request frame holds it. */
function inOwnBuffer(b: Buffer, before: number): Buffer {
  const ab = new ArrayBuffer(before + b.length + 50);
  const view = Buffer.from(ab, before, b.length);
  b.copy(view);
  return view;
}

describe('buffers given up with appends', () => {
  test('move to the worker, are stored as sent, and come back once written; buffers not given up stay and nothing comes back', async () => {
    const c: ShardClient = await startShards(tempDir(), 2);
    try {
      const returned: ArrayBuffer[] = [];
      c.onReturnedBuffer((ab) => returned.push(ab));
      await createStream(c, '/own');
      const sent = [batch(1000), batch(700), batch(1200)];

      const body = inOwnBuffer(sent[0]!, 120);
      const r = await c.append({ name: '/own', origin: 'kafka', payload: { kind: 'batches', body, ownBuffer: true }, contentType: null, close: false });
      expect(r.startSeq).toBe(0);
      // Moved, not copied: the sender's view is detached.
      expect(body.length).toBe(0);
      for (let i = 0; i < 50 && returned.length < 1; i++) await new Promise((res) => setTimeout(res, 20));
      expect(returned.map((ab) => ab.byteLength)).toEqual([120 + sent[0]!.length + 50]);
      // The frame was built in place: the batch sits where it was, its base offset rewritten, the frame header before it.
      const back = Buffer.from(returned[0]!, 120, sent[0]!.length);
      expect(back.subarray(8).equals(sent[0]!.subarray(8))).toBe(true);
      expect(Buffer.from(returned[0]!, 120 - 13 + 8, 1)[0]).toBe(1); // FrameType.Data

      // Not given up: copied; the sender's bytes stay as they were and nothing comes back.
      const kept = inOwnBuffer(sent[1]!, 120);
      await c.append({ name: '/own', origin: 'kafka', payload: { kind: 'batches', body: kept }, contentType: null, close: false });
      expect(kept.equals(sent[1]!)).toBe(true);
      // Given up, and refused (a bad CRC): stored nothing, and the next append is unaffected.
      const bad = inOwnBuffer(sent[2]!, 120);
      bad[17] = bad[17]! ^ 1;
      await expect(c.append({ name: '/own', origin: 'kafka', payload: { kind: 'batches', body: bad, ownBuffer: true }, contentType: null, close: false })).rejects.toMatchObject({ code: 'invalid_batch' });
      const last = inOwnBuffer(sent[2]!, 64);
      expect((await c.append({ name: '/own', origin: 'kafka', payload: { kind: 'batches', body: last, ownBuffer: true }, contentType: null, close: false })).startSeq).toBe(1700);
      for (let i = 0; i < 50 && returned.length < 2; i++) await new Promise((res) => setTimeout(res, 20));
      expect(returned).toHaveLength(2);

      const stored = await readAll(c, '/own', 'binary');
      const batches = splitBatches(stored.body);
      if (!Array.isArray(batches)) throw batches;
      expect(batches.map((b) => b.subarray(8).equals([sent[0]!, sent[1]!, sent[2]!][batches.indexOf(b)]!.subarray(8)))).toEqual([true, true, true]);
      expect(stored.count).toBe(2900);
    } finally {
      await c.close();
    }
  });
});
