/** Writer with spliceMin: large byte runs are referenced, not copied, and the frame is the same bytes. */
import { decodeFetchResponse, encodeFetchResponse } from '../../src/kafka-wire/messages/fetch';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { Writer } from '../../src/kafka-wire/protocol/writer';

describe('Writer with referenced byte runs', () => {
  const big = Buffer.alloc(200_000, 7);
  const small = Buffer.from('tiny');

  function write(w: Writer): void {
    const size = w.reserveInt32();
    w.int16(3);
    w.bytes(big);
    w.compactBytes(small);
    w.nullableBytes(big);
    w.int32(42);
    w.int32At(size, w.length - 4);
  }

  test('produces the same bytes as a copying Writer, with the large runs as the very buffers given', () => {
    const copying = new Writer();
    write(copying);
    const splicing = new Writer(64, 65_536);
    write(splicing);
    expect(splicing.length).toBe(copying.length);
    const parts = splicing.toBuffers();
    expect(parts.filter((p) => p === big)).toHaveLength(2);
    expect(Buffer.concat(parts)).toEqual(copying.toBuffer());
    expect(splicing.toBuffer()).toEqual(copying.toBuffer());
    expect(splicing.toBuffer().readInt32BE(0)).toBe(copying.length - 4);
  });

  test('encodes a Fetch v13 response whose records decode back unchanged', () => {
    const res = {
      throttleTimeMs: 0, errorCode: 0, sessionId: 0,
      responses: [{ topicId: '00000000-0000-0000-0000-000000000001', partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: 1n, lastStableOffset: 1n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: big }] }],
    };
    const w = new Writer(64, 65_536);
    encodeFetchResponse(w, res, 13);
    expect(w.toBuffers().length).toBe(3);
    const back = decodeFetchResponse(new Reader(Buffer.concat(w.toBuffers()), 0), 13);
    expect(back.responses[0]!.partitions[0]!.records).toEqual(big);
  });
});
