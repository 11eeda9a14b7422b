import { randomBytes } from 'node:crypto';
import { crc32c, crc32cClaimed, crc32cCombine, crc32cRange } from '../../src/util/crc32c';

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

/** Records with the frame prefix: u32 BE length, u32 BE CRC-32C of the bytes after the prefix. */
function prefixed(bodies: Buffer[]): Buffer {
  return Buffer.concat(
    bodies.map((b) => {
      const p = Buffer.alloc(8);
      p.writeUInt32BE(b.length, 0);
      p.writeUInt32BE(crc32c(b), 4);
      return Buffer.concat([p, b]);
    }),
  );
}

describe('crc32cCombine', () => {
  test('gives the CRC of a ++ b from the CRCs of a and b, for lengths up to 1 MiB', () => {
    for (const [la, lb] of [[0, 0], [0, 7], [5, 0], [1, 1], [100, 108], [3000, 255], [17, 65536], [1, (1 << 20) + 3]] as const) {
      const a = randomBytes(la);
      const b = randomBytes(lb);
      expect(crc32cCombine(crc32c(a), crc32c(b), lb)).toBe(crc32c(Buffer.concat([a, b])));
    }
  });
});

describe('crc32cClaimed', () => {
  test('equals the CRC of the whole range when every record is intact (equal and varying lengths)', () => {
    const same = prefixed(Array.from({ length: 50 }, () => randomBytes(105)));
    expect(crc32cClaimed(same, 0, same.length)).toBe(crc32c(same));
    // More distinct lengths than the shift-table cache holds, each repeated so tables get built.
    const varied = prefixed(Array.from({ length: 200 }, (_, i) => randomBytes(1 + ((i >> 1) % 40) * 37)));
    expect(crc32cClaimed(varied, 0, varied.length)).toBe(crc32c(varied));
    expect(crc32cClaimed(varied, 0, 0)).toBe(0);
    // Runs of one length over many lengths: shift tables get built (and the cache refilled) along the way.
    const runs = prefixed(Array.from({ length: 6000 }, (_, i) => randomBytes(1 + (Math.floor(i / 20) % 90) * 11)));
    expect(crc32cClaimed(runs, 0, runs.length)).toBe(crc32c(runs));
  });

  test('differs from the CRC of the range for a flipped bit at every byte of every record', () => {
    const buf = prefixed([randomBytes(5), randomBytes(120), randomBytes(120), randomBytes(300)]);
    for (let i = 0; i < buf.length; i++) {
      const copy = Buffer.from(buf);
      copy[i] = copy[i]! ^ (1 << i % 8);
      const claimed = crc32cClaimed(copy, 0, copy.length);
      expect(claimed === -1 || claimed !== crc32c(copy)).toBe(true);
    }
  });

  test('returns -1 when a length runs past the range', () => {
    const buf = prefixed([randomBytes(10), randomBytes(10)]);
    expect(crc32cClaimed(buf, 0, buf.length - 1)).toBe(-1);
    expect(crc32cClaimed(buf, 0, 5)).toBe(-1);
  });
});
