import {
  ATTR_TIMESTAMP_TYPE,
  BATCH_HEADER_SIZE,
  CRC_POS,
  Compression,
  type DecodedRecord,
  type RecordInput,
  RecordBatchError,
  batchOffsets,
  batchSize,
  decodeRecords,
  encodeRecordBatch,
  readBatchHeader,
  setBaseOffset,
  splitBatches,
  verifyBatchCrc,
} from '../../src/util/record-batch';

const b = (s: string): Buffer => Buffer.from(s);

/** Bit-at-a-time CRC-32C, independent of the code under test. */
function bitwiseCrc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** Recompute the CRC after a test edits a covered byte (to reach the checks behind it). */
function resign(batch: Buffer): Buffer {
  batch.writeUInt32BE(bitwiseCrc32c(batch.subarray(21)), CRC_POS);
  return batch;
}

function plain(records: DecodedRecord[]): unknown[] {
  return records.map((r) => ({
    offset: r.offset,
    timestamp: r.timestamp,
    key: r.key?.toString('hex') ?? null,
    value: r.value?.toString('hex') ?? null,
    headers: r.headers.map(([k, v]) => [k.toString('hex'), v?.toString('hex') ?? null]),
  }));
}

function expected(baseOffset: number, baseTimestamp: number, records: RecordInput[]): unknown[] {
  return records.map((r, i) => ({
    offset: baseOffset + i,
    timestamp: baseTimestamp + (r.timestampDelta ?? 0),
    key: r.key === null ? null : Buffer.from(r.key).toString('hex'),
    value: r.value === null ? null : Buffer.from(r.value).toString('hex'),
    headers: (r.headers ?? []).map(([k, v]) => [Buffer.from(k).toString('hex'), v === null ? null : Buffer.from(v).toString('hex')]),
  }));
}

function roundTrip(records: RecordInput[], baseOffset = 100, baseTimestamp = 1_700_000_000_000): Buffer {
  const batch = encodeRecordBatch({ baseOffset, baseTimestamp, records });
  expect(verifyBatchCrc(batch)).toBe(true);
  expect(batchSize(batch)).toBe(batch.length);
  expect(plain(decodeRecords(batch))).toEqual(expected(baseOffset, baseTimestamp, records));
  return batch;
}

const one: RecordInput[] = [{ key: b('k'), value: b('hello'), headers: [[b('h'), b('v')]] }];

describe('encodeRecordBatch / decodeRecords round trips', () => {
  test('round-trips a keyed record with headers', () => {
    roundTrip(one);
  });

  test('round-trips null keys, null values, empty values, null header values and empty headers', () => {
    roundTrip([
      { key: null, value: b('v'), headers: null },
      { key: b('k'), value: null, headers: [] },
      { key: b(''), value: b(''), headers: [[b(''), null], [b('a'), b('')]] },
      { key: null, value: null, headers: null },
    ]);
  });

  test('round-trips 10 000 records with varied timestamp deltas, including negative and beyond int32', () => {
    const records: RecordInput[] = [];
    for (let i = 0; i < 10_000; i++) {
      records.push({ key: i % 3 === 0 ? null : b(`key-${i}`), value: b(`value ${i}`), headers: null, timestampDelta: (i % 7) * 1000 - 3000 });
    }
    records[17] = { key: null, value: b('far'), headers: null, timestampDelta: 2 ** 40 };
    const batch = roundTrip(records, 5_000_000_000, 1_000);
    expect(readBatchHeader(batch).maxTimestamp).toBe(1_000 + 2 ** 40);
  });

  test('round-trips a 1 MiB binary value and a header with a 300-byte value', () => {
    const big = Buffer.alloc(1024 * 1024, 0xab);
    roundTrip([{ key: b('big'), value: big, headers: [[b('h'), Buffer.alloc(300, 1)]] }]);
  });

  test('returns key, value and header slices as views into the batch buffer', () => {
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records: one });
    const [r] = decodeRecords(batch);
    expect(r?.value?.buffer).toBe(batch.buffer);
    expect(r?.key?.buffer).toBe(batch.buffer);
    expect(r?.headers[0]?.[0].buffer).toBe(batch.buffer);
  });

  test('writes the header fields, defaulting the producer fields to -1', () => {
    const batch = encodeRecordBatch({
      baseOffset: 2 ** 40,
      baseTimestamp: 1_700_000_000_000,
      records: [one[0] as RecordInput, { key: null, value: b('x'), headers: null, timestampDelta: 9 }],
    });
    expect(readBatchHeader(batch)).toEqual({
      baseOffset: 2 ** 40,
      batchLength: batch.length - 12,
      partitionLeaderEpoch: -1,
      magic: 2,
      crc: bitwiseCrc32c(batch.subarray(21)),
      attributes: 0,
      lastOffsetDelta: 1,
      baseTimestamp: 1_700_000_000_000,
      maxTimestamp: 1_700_000_000_009,
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
      recordsCount: 2,
    });
    const idempotent = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records: one, producerId: 2n ** 62n, producerEpoch: 7, baseSequence: 2 ** 31 - 1 });
    const h = readBatchHeader(idempotent);
    expect([h.producerId, h.producerEpoch, h.baseSequence]).toEqual([2n ** 62n, 7, 2 ** 31 - 1]);
  });

  test('refuses an empty record list, compression bits and unsafe offsets', () => {
    expect(() => encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records: [] })).toThrow(RangeError);
    expect(() => encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records: one, attributes: Compression.gzip })).toThrow(RangeError);
    expect(() => encodeRecordBatch({ baseOffset: 2 ** 53, baseTimestamp: 0, records: one })).toThrow(RangeError);
  });
});

describe('byte layout', () => {
  test('encodes exactly the bytes assembled field by field from the RecordBatch v2 layout', () => {
    // Record 0: key "k", value "hello", header h=v, timestampDelta 0, offsetDelta 0.
    const record0 = [
      0x20, // length 16, zig-zag
      0x00, // attributes
      0x00, // timestampDelta 0
      0x00, // offsetDelta 0
      0x02, 0x6b, // keyLength 1, "k"
      0x0a, 0x68, 0x65, 0x6c, 0x6c, 0x6f, // valueLength 5, "hello"
      0x02, // headersCount 1
      0x02, 0x68, // header keyLength 1, "h"
      0x02, 0x76, // header valueLength 1, "v"
    ];
    // Record 1: null key, null value, no headers, timestampDelta 5, offsetDelta 1.
    const record1 = [0x0c, 0x00, 0x0a, 0x02, 0x01, 0x01, 0x00];
    const afterCrc = [
      0x00, 0x00, // attributes
      0x00, 0x00, 0x00, 0x01, // lastOffsetDelta 1
      0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, // baseTimestamp 1700000000000
      0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x05, // maxTimestamp 1700000000005
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // producerId 7
      0x00, 0x01, // producerEpoch 1
      0x00, 0x00, 0x00, 0x03, // baseSequence 3
      0x00, 0x00, 0x00, 0x02, // recordsCount 2
      ...record0,
      ...record1,
    ];
    const crc = bitwiseCrc32c(Uint8Array.from(afterCrc));
    const expectedBytes = Buffer.from([
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, // baseOffset 10
      0x00, 0x00, 0x00, 73, // batchLength: 49 header bytes after this field + 24 record bytes
      0xff, 0xff, 0xff, 0xff, // partitionLeaderEpoch -1
      0x02, // magic
      crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff,
      ...afterCrc,
    ]);
    const encoded = encodeRecordBatch({
      baseOffset: 10,
      baseTimestamp: 1_700_000_000_000,
      producerId: 7n,
      producerEpoch: 1,
      baseSequence: 3,
      records: [
        { key: b('k'), value: b('hello'), headers: [[b('h'), b('v')]] },
        { key: null, value: null, headers: null, timestampDelta: 5 },
      ],
    });
    expect(encoded.toString('hex')).toBe(expectedBytes.toString('hex'));
    expect(BATCH_HEADER_SIZE).toBe(61);
  });
});

describe('CRC and offsets', () => {
  test('detects any flipped byte in the CRC-covered part of the batch', () => {
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: one });
    for (let i = CRC_POS; i < batch.length; i++) {
      const copy = Buffer.from(batch);
      copy[i] = (copy[i] as number) ^ 0x01;
      expect(verifyBatchCrc(copy)).toBe(false);
    }
  });

  test('keeps the CRC valid when setBaseOffset assigns offsets', () => {
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [...one, ...one] });
    setBaseOffset(batch, 2 ** 45 + 3);
    expect(verifyBatchCrc(batch)).toBe(true);
    expect(decodeRecords(batch).map((r) => r.offset)).toEqual([2 ** 45 + 3, 2 ** 45 + 4]);
  });

  test('reports a truncated or too-short batch as failing verification', () => {
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: one });
    expect(verifyBatchCrc(batch.subarray(0, batch.length - 1))).toBe(false);
    expect(verifyBatchCrc(batch.subarray(0, 40))).toBe(false);
  });
});

describe('decodeRecords', () => {
  const records: RecordInput[] = Array.from({ length: 10 }, (_, i) => ({ key: null, value: b(`v${i}`), headers: null, timestampDelta: i }));
  const batch = encodeRecordBatch({ baseOffset: 50, baseTimestamp: 1000, records });

  test('skips records below fromOffset', () => {
    expect(decodeRecords(batch, 0, 57).map((r) => [r.offset, r.value?.toString()])).toEqual([[57, 'v7'], [58, 'v8'], [59, 'v9']]);
    expect(decodeRecords(batch, 0, 50)).toHaveLength(10);
    expect(decodeRecords(batch, 0, 60)).toEqual([]);
  });

  test('decodes a batch at a position inside a larger buffer', () => {
    const joined = Buffer.concat([Buffer.from('junk'), batch, Buffer.from('tail')]);
    expect(decodeRecords(joined, 4).map((r) => r.value?.toString())).toEqual(records.map((r) => r.value?.toString()));
  });

  test('gives every record the batch maxTimestamp when the timestamp type is LogAppendTime', () => {
    const logAppend = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1000, records, attributes: ATTR_TIMESTAMP_TYPE });
    expect(new Set(decodeRecords(logAppend).map((r) => r.timestamp))).toEqual(new Set([1009]));
  });

  function expectError(buf: Buffer, code: string): void {
    let caught: unknown;
    try {
      decodeRecords(buf);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(RecordBatchError);
    expect((caught as RecordBatchError).code).toBe(code);
  }

  test('throws unsupported_compression for a compressed batch', () => {
    const compressed = Buffer.from(batch);
    compressed.writeInt16BE(Compression.zstd, 21);
    expectError(compressed, 'unsupported_compression');
  });

  test('throws corrupt_batch for a bad magic, a truncated batch and a short header', () => {
    const badMagic = Buffer.from(batch);
    badMagic[16] = 1;
    expectError(badMagic, 'corrupt_batch');
    expectError(batch.subarray(0, batch.length - 1), 'corrupt_batch');
    expectError(batch.subarray(0, 30), 'corrupt_batch');
  });

  test('throws corrupt_batch when recordsCount disagrees with the records present', () => {
    const more = Buffer.from(batch);
    more.writeInt32BE(11, 57);
    expectError(more, 'corrupt_batch');
    const fewer = Buffer.from(batch);
    fewer.writeInt32BE(9, 57);
    expectError(fewer, 'corrupt_batch');
  });

  test('throws corrupt_batch when a record length or a field length runs past its bounds', () => {
    const recordLength = Buffer.from(batch);
    recordLength[61] = 0x7e; // first record claims 63 bytes
    expectError(recordLength, 'corrupt_batch');
    const valueLength = Buffer.from(batch);
    valueLength[61 + 5] = 0x7e; // first record's valueLength (after a null key) claims 63 bytes
    expectError(valueLength, 'corrupt_batch');
  });
});

describe('splitBatches', () => {
  const a = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: one });
  const c = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 2, records: [...one, ...one, ...one] });

  function expectCorrupt(result: Buffer[] | RecordBatchError, pattern: RegExp): void {
    expect(result).toBeInstanceOf(RecordBatchError);
    expect((result as RecordBatchError).code).toBe('corrupt_batch');
    expect((result as RecordBatchError).message).toMatch(pattern);
  }

  test('splits a concatenation of batches into views of each batch', () => {
    const joined = Buffer.concat([a, c, a]);
    const parts = splitBatches(joined);
    expect(Array.isArray(parts)).toBe(true);
    const views = parts as Buffer[];
    expect(views.map((v) => v.toString('hex'))).toEqual([a, c, a].map((v) => v.toString('hex')));
    expect(views[1]?.buffer).toBe(joined.buffer);
    expect(splitBatches(Buffer.alloc(0))).toEqual([]);
  });

  test('rejects truncated input, naming the batch', () => {
    expectCorrupt(splitBatches(Buffer.concat([a, c]).subarray(0, a.length + c.length - 1)), /batch 1 .*runs past the end/);
    expectCorrupt(splitBatches(Buffer.concat([a, c.subarray(0, 20)])), /batch 1 .*truncated header/);
  });

  test('rejects a bad magic byte', () => {
    const bad = Buffer.from(a);
    bad[16] = 1;
    expectCorrupt(splitBatches(bad), /magic 1/);
  });

  test('rejects a bad CRC', () => {
    const bad = Buffer.from(c);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 0xff;
    expectCorrupt(splitBatches(Buffer.concat([a, bad])), /batch 1 .*CRC/);
  });

  test('rejects a batchLength smaller than the header', () => {
    const bad = Buffer.from(a);
    bad.writeInt32BE(10, 8);
    expectCorrupt(splitBatches(bad), /too small/);
  });

  test('rejects an uncompressed batch whose recordsCount does not match lastOffsetDelta', () => {
    const bad = Buffer.from(c);
    bad.writeInt32BE(1, 23);
    expectCorrupt(splitBatches(resign(bad)), /recordsCount 3 does not match lastOffsetDelta 1/);
  });

  test('rejects a correctly checksummed batch whose records are malformed or out of order', () => {
    const badLength = Buffer.from(a);
    badLength[61 + 6] = 0x7e;
    expectCorrupt(splitBatches(resign(badLength)), /batch 0/);
    const badDelta = Buffer.from(a);
    badDelta[61 + 3] = 0x02; // offsetDelta 1 for record 0
    expectCorrupt(splitBatches(resign(badDelta)), /offsetDelta is not 0/);
  });

  test('accepts a re-signed batch with bytes changed in its records exactly when decodeRecords reads it with offset deltas 0, 1, 2…', () => {
    // The record walk of splitBatches has its own fast varint reads; decodeRecords is the reference.
    const records: RecordInput[] = [
      { key: b('key'), value: Buffer.alloc(200, 1), headers: [[b('h'), b('v')], [b('n'), null]] },
      { key: null, value: null, timestampDelta: 5_000_000_000, headers: [] },
      { key: b(''), value: Buffer.alloc(70, 2), timestampDelta: -3, headers: [] },
      // Two-byte lengths with the high bits of their second byte set (8,000 → zig-zag 16,000), an empty header key.
      { key: null, value: Buffer.alloc(8000, 4), headers: [[b(''), b('v')]] },
      ...Array.from({ length: 150 }, (_, i) => ({ key: null, value: Buffer.alloc(i, 3), timestampDelta: i * 1000, headers: [] })),
    ];
    const good = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records });
    expect(Array.isArray(splitBatches(good))).toBe(true);
    // The empty header key (length 0, zig-zag 0x00) made null (-1, 0x01): the same bytes otherwise.
    const nullKey = Buffer.from(good);
    const keyAt = good.indexOf(Buffer.from([0x02, 0x00, 0x02, 0x76]), BATCH_HEADER_SIZE) + 1;
    expect(keyAt).toBeGreaterThan(0);
    nullKey[keyAt] = 0x01;
    expectCorrupt(splitBatches(resign(nullKey)), /record 3: null header key/);
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    let accepted = 0;
    for (let round = 0; round < 3000; round++) {
      const bad = Buffer.from(good);
      for (let k = 1 + random(3); k > 0; k--) {
        // Mostly the first records (lengths and deltas), sometimes anywhere in the records.
        const at = BATCH_HEADER_SIZE + (random(4) === 0 ? random(bad.length - BATCH_HEADER_SIZE) : random(Math.min(400, bad.length - BATCH_HEADER_SIZE)));
        bad[at] = random(3) === 0 ? bad[at]! ^ (1 << random(8)) : random(256);
      }
      resign(bad);
      let reference: boolean;
      try {
        reference = decodeRecords(bad).every((r, i) => r.offset === i);
      } catch {
        reference = false;
      }
      const split = splitBatches(bad);
      expect([round, Array.isArray(split)]).toEqual([round, reference]);
      if (reference) accepted++;
    }
    // Some changes keep the batch well formed (a value byte), most do not.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(2900);
  });

  test('accepts a checksummed compressed batch without reading its records', () => {
    const compressed = Buffer.from(a);
    compressed.writeInt16BE(Compression.lz4, 21);
    const parts = splitBatches(resign(compressed));
    expect(Array.isArray(parts) && parts.length).toBe(1);
  });
});

describe('readBatchHeader', () => {
  test('throws corrupt_batch when fewer than 61 bytes remain', () => {
    expect(() => readBatchHeader(Buffer.alloc(60))).toThrow(RecordBatchError);
  });
});

describe('batchOffsets', () => {
  test('reads the first offset and the end from the header, at a position, as readBatchHeader does', () => {
    const records: RecordInput[] = Array.from({ length: 5 }, (_, i) => ({ key: null, value: b(`v${i}`), headers: [] }));
    const batch = encodeRecordBatch({ baseOffset: 2 ** 40 + 7, baseTimestamp: 0, records });
    const framed = Buffer.concat([Buffer.alloc(13, 0xee), batch]);
    expect(batchOffsets(framed, 13)).toEqual({ first: 2 ** 40 + 7, end: 2 ** 40 + 12 });
    const h = readBatchHeader(framed, 13);
    expect(batchOffsets(framed, 13)).toEqual({ first: h.baseOffset, end: h.baseOffset + h.lastOffsetDelta + 1 });
    expect(() => batchOffsets(framed.subarray(0, 13 + BATCH_HEADER_SIZE - 1), 13)).toThrow(RecordBatchError);
  });
});
