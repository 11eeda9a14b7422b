import { randomBytes } from 'node:crypto';
import { crc32c, crc32cRange } from '../../src/util/crc32c';

/** Bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78): slow, obviously right. */
function bitwiseCrc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe('crc32c', () => {
  test('gives the CRC-32C check value for "123456789"', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  test('agrees with a bitwise reference on every length from 0 to 600 bytes (JS and native paths)', () => {
    const data = randomBytes(600);
    for (let n = 0; n <= 600; n++) {
      expect(crc32c(data.subarray(0, n))).toBe(bitwiseCrc32c(data.subarray(0, n)));
    }
  });

  test('continues a running checksum from an initial value on both paths', () => {
    const data = randomBytes(5000);
    for (const cut of [0, 3, 100, 159, 160, 161, 4000]) {
      expect(crc32c(data.subarray(cut), crc32c(data.subarray(0, cut)))).toBe(crc32c(data));
    }
  });

  test('checksums a range without a view the same as the view itself', () => {
    const data = randomBytes(1000);
    for (const [start, end] of [[0, 0], [5, 113], [21, 180], [1, 1000], [999, 1000]] as const) {
      expect(crc32cRange(data, start, end)).toBe(bitwiseCrc32c(data.subarray(start, end)));
    }
  });
});
