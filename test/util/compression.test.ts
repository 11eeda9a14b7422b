/** Kafka's record-batch codecs (src/util/compression.ts): round trips, both snappy framings, bad input. */
import * as zlib from 'node:zlib';
import * as snappy from 'snappy';
import { CompressionError, compress, decompress, ready } from '../../src/util/compression';
import { Compression } from '../../src/util/record-batch';

const DATA = Buffer.from(Array.from({ length: 2000 }, (_, i) => `record ${i} `).join(''));

describe('record-batch compression codecs', () => {
  beforeAll(() => ready());

  test.each([
    ['gzip', Compression.gzip],
    ['snappy', Compression.snappy],
    ['lz4', Compression.lz4],
    ['zstd', Compression.zstd],
  ])('%s round-trips and actually compresses', (_name, codec) => {
    const packed = compress(codec, DATA);
    expect(packed.length).toBeLessThan(DATA.length / 2);
    expect(decompress(codec, packed)).toEqual(DATA);
  });

  test('snappy is written with xerial framing (as librdkafka and the Java client write it), in 32 KiB blocks', () => {
    const big = Buffer.concat([DATA, DATA, DATA]);
    const packed = compress(Compression.snappy, big);
    expect(packed.subarray(0, 8)).toEqual(Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]));
    expect(packed.readInt32BE(8)).toBe(1);
    expect(packed.readInt32BE(12)).toBe(1);
    // [int32 length][block] chunks, one per 32 KiB of input, filling the rest exactly.
    let chunks = 0;
    let pos = 16;
    while (pos < packed.length) {
      pos += 4 + packed.readInt32BE(pos);
      chunks++;
    }
    expect(pos).toBe(packed.length);
    expect(chunks).toBe(Math.ceil(big.length / 32768));
    expect(decompress(Compression.snappy, packed)).toEqual(big);
  });

  test('snappy also reads a plain block without framing (kafkajs plugins, @platformatic/kafka)', () => {
    expect(decompress(Compression.snappy, snappy.compressSync(DATA))).toEqual(DATA);
  });

  test.each([
    ['gzip', Compression.gzip],
    ['snappy', Compression.snappy],
    ['lz4', Compression.lz4],
    ['zstd', Compression.zstd],
  ])('%s refuses bytes that are not its format with a CompressionError', (_name, codec) => {
    expect(() => decompress(codec, Buffer.from('definitely not compressed data'))).toThrow(CompressionError);
  });

  test('a truncated xerial chunk is refused', () => {
    const packed = compress(Compression.snappy, DATA);
    expect(() => decompress(Compression.snappy, packed.subarray(0, packed.length - 5))).toThrow(CompressionError);
  });

  test('codec numbers outside Kafka\'s are refused', () => {
    expect(() => decompress(5, DATA)).toThrow(/not one of Kafka's/);
  });
});

describe('decompression bombs', () => {
  beforeAll(() => ready());

  test('a snappy block declaring more than the limit is refused before it is decoded', () => {
    // Varint 0x80 0x80 0x80 0x80 0x08: 2^31 bytes declared.
    expect(() => decompress(Compression.snappy, Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0]))).toThrow(/exceeds/);
  });

  test('an lz4 frame with more blocks than the limit allows is refused before it is decoded', () => {
    // Frame header: magic, FLG (version 01, block independence), BD (4 MiB blocks), header checksum; then 65 blocks of one byte each.
    const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73]);
    const block = Buffer.from([1, 0, 0, 0x80, 0x41]); // size 1, stored uncompressed (high bit)
    const frame = Buffer.concat([header, ...Array.from({ length: 65 }, () => block), Buffer.alloc(4)]);
    expect(() => decompress(Compression.lz4, frame)).toThrow(/more than/);
  });

  test('gzip output beyond the limit is refused', () => {
    // 300 gzip members of 1 MiB of zeros each: 300 KB in, 300 MiB out.
    const member = zlib.gzipSync(Buffer.alloc(1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 300 }, () => member));
    expect(() => decompress(Compression.gzip, bomb)).toThrow(CompressionError);
  });
});
