/** Kafka's record-batch codecs (src/util/compression.ts): round trips, both snappy framings, bad input. */
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
