import {
  type Cursor,
  VarintError,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from '../../src/util/varint';

/** Reference encoder written independently with BigInt: zig-zag over 64 bits, 7 bits a byte. */
function referenceVarlong(v: number): Buffer {
  const x = BigInt(v);
  let u = BigInt.asUintN(64, (x << 1n) ^ (x >> 63n));
  const out: number[] = [];
  while (u > 0x7fn) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return Buffer.from(out);
}

function encodeVarint(v: number): Buffer {
  const buf = Buffer.alloc(5);
  return buf.subarray(0, writeVarint(buf, 0, v));
}

function encodeVarlong(v: number): Buffer {
  const buf = Buffer.alloc(10);
  return buf.subarray(0, writeVarlong(buf, 0, v));
}

function cursor(buf: Uint8Array): Cursor {
  return { pos: 0, end: buf.length };
}

describe('varint (zig-zag int32)', () => {
  test('encodes the zig-zag examples from the Kafka and protobuf documentation', () => {
    expect(encodeVarint(0).toString('hex')).toBe('00');
    expect(encodeVarint(-1).toString('hex')).toBe('01');
    expect(encodeVarint(1).toString('hex')).toBe('02');
    expect(encodeVarint(63).toString('hex')).toBe('7e');
    expect(encodeVarint(-64).toString('hex')).toBe('7f');
    expect(encodeVarint(64).toString('hex')).toBe('8001');
    expect(encodeVarint(300).toString('hex')).toBe('d804');
    expect(encodeVarint(2147483647).toString('hex')).toBe('feffffff0f');
    expect(encodeVarint(-2147483648).toString('hex')).toBe('ffffffff0f');
  });

  test('round-trips int32 edge values and reports their size exactly', () => {
    const values = [0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 1048575, -1048576, 134217727, -134217728, 134217728, 2147483647, -2147483648];
    for (const v of values) {
      const bytes = encodeVarint(v);
      expect(bytes.length).toBe(sizeOfVarint(v));
      expect(bytes.equals(referenceVarlong(v))).toBe(true);
      const c = cursor(bytes);
      expect(readVarint(bytes, c)).toBe(v);
      expect(c.pos).toBe(bytes.length);
    }
  });

  test('refuses a varint longer than five bytes', () => {
    const bytes = Buffer.from('8080808080 00'.replace(' ', ''), 'hex');
    expect(() => readVarint(bytes, cursor(bytes))).toThrow(VarintError);
  });

  test('does not read at or past the cursor end', () => {
    const bytes = Buffer.from('8001', 'hex');
    expect(() => readVarint(bytes, { pos: 0, end: 1 })).toThrow(VarintError);
    expect(() => readVarint(bytes, { pos: 2, end: 2 })).toThrow(VarintError);
  });
});

describe('varlong (zig-zag int64 held in a number)', () => {
  const edges = [
    0, -1, 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 32, -(2 ** 32), 1_700_000_000_000, -1_700_000_000_000,
    2 ** 49, 2 ** 52 + 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, -(2 ** 53),
  ];

  test('matches a BigInt reference encoder on edge values up to ±2^53', () => {
    for (const v of edges) {
      const bytes = encodeVarlong(v);
      expect(bytes.toString('hex')).toBe(referenceVarlong(v).toString('hex'));
      expect(sizeOfVarlong(v)).toBe(bytes.length);
      const c = cursor(bytes);
      expect(readVarlong(bytes, c)).toBe(v);
      expect(c.pos).toBe(bytes.length);
    }
  });

  test('matches the BigInt reference encoder on 10 000 random safe integers', () => {
    let seed = 42;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 10_000; i++) {
      const magnitude = Math.floor(random() * 2 ** Math.floor(random() * 54));
      const v = random() < 0.5 && magnitude !== 0 ? -magnitude : magnitude;
      const bytes = encodeVarlong(v);
      expect(bytes.equals(referenceVarlong(v))).toBe(true);
      expect(sizeOfVarlong(v)).toBe(bytes.length);
      expect(readVarlong(bytes, cursor(bytes))).toBe(v);
    }
  });

  test('reads a non-minimal ten-byte encoding of a small value', () => {
    const bytes = Buffer.from('82808080808080808000', 'hex');
    const c = cursor(bytes);
    expect(readVarlong(bytes, c)).toBe(1);
    expect(c.pos).toBe(10);
  });

  test('refuses values outside [-2^53, 2^53 - 1] instead of rounding them', () => {
    const int64Min = Buffer.from('ffffffffffffffffff01', 'hex'); // zig-zag of -2^63
    expect(() => readVarlong(int64Min, cursor(int64Min))).toThrow(VarintError);
    const twoTo53 = referenceVarlong(2 ** 53);
    expect(() => readVarlong(twoTo53, cursor(twoTo53))).toThrow(VarintError);
  });

  test('refuses a varlong longer than ten bytes and one that runs past the end', () => {
    const eleven = Buffer.from('8080808080808080808000', 'hex');
    expect(() => readVarlong(eleven, cursor(eleven))).toThrow(VarintError);
    const cut = Buffer.from('8080', 'hex');
    expect(() => readVarlong(cut, cursor(cut))).toThrow(VarintError);
  });

  test('refuses to write a number outside [-2^53, 2^53 - 1] or with a fraction', () => {
    const buf = Buffer.alloc(10);
    expect(() => writeVarlong(buf, 0, 2 ** 53)).toThrow(RangeError);
    expect(() => writeVarlong(buf, 0, -(2 ** 53) - 2)).toThrow(RangeError);
    expect(() => writeVarlong(buf, 0, 2 ** 40 + 0.5)).toThrow(RangeError);
    expect(() => sizeOfVarlong(Infinity)).toThrow(RangeError);
  });
});
