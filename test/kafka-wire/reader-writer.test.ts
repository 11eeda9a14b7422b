import { KafkaProtocolError } from '../../src/kafka-wire/protocol/errors';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { isUuid, ZERO_UUID } from '../../src/kafka-wire/protocol/uuid';
import { sizeOfUvarint, Writer } from '../../src/kafka-wire/protocol/writer';

function written(fill: (w: Writer) => void): Buffer {
  const w = new Writer(16);
  fill(w);
  return Buffer.from(w.toBuffer());
}

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Independent reference: unsigned LEB128 over a bigint. */
function referenceUnsigned(u: bigint): Buffer {
  const out: number[] = [];
  do {
    let b = Number(u & 0x7fn);
    u >>= 7n;
    if (u > 0n) b |= 0x80;
    out.push(b);
  } while (u > 0n);
  return Buffer.from(out);
}

describe('unsigned varints (compact lengths, tagged fields)', () => {
  const edges = [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1f_ffff, 0x20_0000, 0xfff_ffff, 0x1000_0000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];

  test.each(edges)('writes and reads %d in the fewest bytes', (u) => {
    const bytes = written((w) => w.uvarint(u));
    expect(bytes).toEqual(referenceUnsigned(BigInt(u)));
    expect(bytes.length).toBe(sizeOfUvarint(u));
    const r = new Reader(bytes);
    expect(r.uvarint()).toBe(u);
    expect(r.remaining).toBe(0);
  });

  test('uses the bytes of the protocol guide examples', () => {
    expect(written((w) => w.uvarint(300))).toEqual(hex('ac02'));
    expect(written((w) => w.uvarint(0xffff_ffff))).toEqual(hex('ffffffff0f'));
  });

  test('rejects values outside uint32 when writing', () => {
    expect(() => new Writer().uvarint(-1)).toThrow(RangeError);
    expect(() => new Writer().uvarint(2 ** 32)).toThrow(RangeError);
    expect(() => new Writer().uvarint(1.5)).toThrow(RangeError);
  });

  test('rejects a varint longer than five bytes or wider than 32 bits when reading', () => {
    expect(() => new Reader(hex('ffffffff10')).uvarint()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('ffffffffff01')).uvarint()).toThrow(KafkaProtocolError);
  });

  test('rejects a truncated varint', () => {
    expect(() => new Reader(hex('ff')).uvarint()).toThrow(KafkaProtocolError);
  });

  const longEdges = [0n, 0x7fn, 0x80n, 0xffff_ffffn, 0x1_0000_0000n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n];

  test.each(longEdges)('writes and reads the unsigned varlong %p', (u) => {
    const bytes = written((w) => w.uvarlong(u));
    expect(bytes).toEqual(referenceUnsigned(u));
    expect(new Reader(bytes).uvarlong()).toBe(u);
  });

  test('rejects unsigned varlongs outside 64 bits', () => {
    expect(() => new Writer().uvarlong(-1n)).toThrow(RangeError);
    expect(() => new Writer().uvarlong(1n << 64n)).toThrow(RangeError);
    expect(() => new Reader(hex('ffffffffffffffffff02')).uvarlong()).toThrow(KafkaProtocolError);
  });
});

describe('zig-zag varints (record fields)', () => {
  test('maps 0, -1, 1, -2, 2 to 0, 1, 2, 3, 4 as in the protobuf and Kafka docs', () => {
    expect(written((w) => [0, -1, 1, -2, 2].forEach((v) => w.varint(v)))).toEqual(hex('0001020304'));
  });

  test.each([0, -1, 1, 63, -64, 64, -65, 0x7fff_ffff, -0x8000_0000])('round-trips the int32 %d', (v) => {
    const bytes = written((w) => w.varint(v));
    expect(new Reader(bytes).varint()).toBe(v);
  });

  test('encodes the int32 extremes in five bytes', () => {
    expect(written((w) => w.varint(0x7fff_ffff))).toEqual(hex('feffffff0f'));
    expect(written((w) => w.varint(-0x8000_0000))).toEqual(hex('ffffffff0f'));
  });

  test.each([0n, -1n, 1n, (1n << 63n) - 1n, -(1n << 63n), 1_700_000_000_000n])('round-trips the int64 %p as a varlong', (v) => {
    const bytes = written((w) => w.varlong(v));
    expect(new Reader(bytes).varlong()).toBe(v);
  });

  test('encodes the int64 extremes in ten bytes', () => {
    expect(written((w) => w.varlong((1n << 63n) - 1n))).toEqual(hex('feffffffffffffffff01'));
    expect(written((w) => w.varlong(-(1n << 63n)))).toEqual(hex('ffffffffffffffffff01'));
  });

  test('rejects values outside int32 / int64', () => {
    expect(() => new Writer().varint(0x8000_0000)).toThrow(RangeError);
    expect(() => new Writer().varlong(1n << 63n)).toThrow(RangeError);
  });
});

describe('fixed-width integers, floats, booleans and UUIDs', () => {
  test('are big-endian and round-trip their extremes', () => {
    const bytes = written((w) => {
      w.int8(-128);
      w.int16(-32768);
      w.uint16(65535);
      w.int32(-0x8000_0000);
      w.uint32(0xffff_ffff);
      w.int64(-(1n << 63n));
      w.float64(-0.5);
      w.bool(true);
      w.bool(false);
    });
    expect(bytes.subarray(0, 3)).toEqual(hex('80 8000'));
    const r = new Reader(bytes);
    expect([r.int8(), r.int16(), r.uint16(), r.int32(), r.uint32(), r.int64(), r.float64(), r.bool(), r.bool()]).toEqual([
      -128, -32768, 65535, -0x8000_0000, 0xffff_ffff, -(1n << 63n), -0.5, true, false,
    ]);
    expect(r.remaining).toBe(0);
  });

  test('refuse values outside their range', () => {
    expect(() => new Writer().int8(128)).toThrow(RangeError);
    expect(() => new Writer().int16(-32769)).toThrow(RangeError);
    expect(() => new Writer().int32(2 ** 31)).toThrow(RangeError);
    expect(() => new Writer().int64(1n << 63n)).toThrow(RangeError);
  });

  test('read any non-zero byte as true, as Java does', () => {
    expect(new Reader(hex('02')).bool()).toBe(true);
  });

  test('UUIDs are 16 raw bytes and canonical lowercase strings', () => {
    const canonical = '01234567-89ab-cdef-0123-456789abcdef';
    const bytes = written((w) => w.uuid(canonical.toUpperCase()));
    expect(bytes).toEqual(hex('0123456789abcdef0123456789abcdef'));
    expect(new Reader(bytes).uuid()).toBe(canonical);
    expect(isUuid(canonical)).toBe(true);
    expect(isUuid(canonical.slice(1))).toBe(false);
    expect(new Reader(Buffer.alloc(16)).uuid()).toBe(ZERO_UUID);
    expect(() => new Writer().uuid('not-a-uuid')).toThrow(RangeError);
  });
});

describe('strings and bytes', () => {
  test('classic strings carry an int16 length and null is -1', () => {
    expect(written((w) => w.string('ab'))).toEqual(hex('0002 6162'));
    expect(written((w) => w.nullableString(null))).toEqual(hex('ffff'));
    expect(new Reader(hex('ffff')).nullableString()).toBeNull();
  });

  test('compact strings carry length + 1 as an unsigned varint and null is 0', () => {
    expect(written((w) => w.compactString('ab'))).toEqual(hex('03 6162'));
    expect(written((w) => w.compactString(''))).toEqual(hex('01'));
    expect(written((w) => w.compactNullableString(null))).toEqual(hex('00'));
    expect(new Reader(hex('00')).compactNullableString()).toBeNull();
  });

  test('lengths count UTF-8 bytes, not UTF-16 code units', () => {
    const s = 'zß€😀';
    const bytes = written((w) => {
      w.string(s);
      w.compactString(s);
    });
    expect(bytes.readInt16BE(0)).toBe(Buffer.byteLength(s));
    const r = new Reader(bytes);
    expect(r.string()).toBe(s);
    expect(r.compactString()).toBe(s);
  });

  test.each(['', 'a', 'x'.repeat(32), 'x'.repeat(33), 'é', `${'x'.repeat(31)}é`, 'x'.repeat(200)])('decodes %p as Buffer#toString does', (s) => {
    const r = new Reader(written((w) => w.compactString(s)));
    expect(r.compactString()).toBe(s);
  });

  test('a null where the schema forbids one is a protocol error', () => {
    expect(() => new Reader(hex('ffff')).string()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('00')).compactString()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('ffffffff')).bytes()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('00')).compactBytes()).toThrow(KafkaProtocolError);
  });

  test('negative lengths other than -1 and lengths past the end are protocol errors', () => {
    expect(() => new Reader(hex('fffe')).nullableString()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('0005 6162')).string()).toThrow(/truncated/);
    expect(() => new Reader(hex('fffffffe')).nullableBytes()).toThrow(KafkaProtocolError);
  });

  test('strings longer than 32767 bytes are refused both ways', () => {
    expect(() => new Writer().string('x'.repeat(0x8000))).toThrow(RangeError);
    expect(() => new Reader(Buffer.concat([hex('818002'), Buffer.alloc(0x8000)])).compactString()).toThrow(KafkaProtocolError);
  });

  test('bytes are zero-copy slices of the input', () => {
    const input = hex('00000003 010203 04 010203');
    const r = new Reader(input);
    const a = r.bytes();
    const b = r.compactBytes();
    expect(a).toEqual(hex('010203'));
    expect(b).toEqual(hex('010203'));
    input[4] = 9;
    expect(a[0]).toBe(9);
    expect(new Reader(hex('00')).compactNullableBytes()).toBeNull();
    expect(written((w) => w.compactNullableBytes(null))).toEqual(hex('00'));
    expect(written((w) => w.nullableBytes(null))).toEqual(hex('ffffffff'));
  });
});

describe('arrays', () => {
  test('classic arrays carry an int32 count, compact ones count + 1', () => {
    const bytes = written((w) => {
      w.array([1, 2], (x) => w.int8(x));
      w.compactArray([1, 2], (x) => w.int8(x));
      w.nullableArray(null, (x: number) => w.int8(x));
      w.compactNullableArray(null, (x: number) => w.int8(x));
    });
    expect(bytes).toEqual(hex('00000002 01 02  03 01 02  ffffffff  00'));
    const r = new Reader(bytes);
    expect(r.array(() => r.int8())).toEqual([1, 2]);
    expect(r.compactArray(() => r.int8())).toEqual([1, 2]);
    expect(r.nullableArray(() => r.int8())).toBeNull();
    expect(r.compactNullableArray(() => r.int8())).toBeNull();
  });

  test('a count larger than the bytes left fails before allocating', () => {
    expect(() => new Reader(hex('7fffffff 00')).array(() => 0)).toThrow(/array of 2147483647 elements/);
    expect(() => new Reader(hex('ffffffff0f')).compactArray(() => 0)).toThrow(KafkaProtocolError);
  });

  test('a null array where the schema forbids one is a protocol error', () => {
    const r = new Reader(hex('ffffffff'));
    expect(() => r.array(() => r.int8())).toThrow(KafkaProtocolError);
  });
});

describe('tagged fields (KIP-482)', () => {
  test('are written as count, then tag, size and value per field', () => {
    const bytes = written((w) => {
      w.uvarint(2);
      let m = w.beginTagged(0);
      w.compactString('ab');
      w.endTagged(m);
      m = w.beginTagged(5);
      w.int32(7);
      w.endTagged(m);
    });
    expect(bytes).toEqual(hex('02 00 03 036162 05 04 00000007'));
  });

  test('a value of 128 bytes or more gets a wider size and keeps its bytes', () => {
    const value = Buffer.alloc(300, 0xab);
    const bytes = written((w) => {
      w.uvarint(1);
      const m = w.beginTagged(1);
      w.raw(value);
      w.endTagged(m);
      w.int8(1);
    });
    expect(bytes.subarray(0, 4)).toEqual(hex('01 01 ac02'));
    expect(bytes.subarray(4, 304)).toEqual(value);
    expect(bytes[304]).toBe(1);
  });

  test('known tags are read, unknown ones skipped', () => {
    const bytes = hex('03  00 03 036162  01 02 ffff  07 04 00000007  2a');
    const r = new Reader(bytes);
    const seen: Record<number, unknown> = {};
    r.taggedFields((tag) => {
      if (tag === 0) seen[0] = r.compactString();
      else if (tag === 7) seen[7] = r.int32();
      else return false;
      return true;
    });
    expect(seen).toEqual({ 0: 'ab', 7: 7 });
    expect(r.int8()).toBe(0x2a);
    const skipAll = new Reader(bytes);
    skipAll.taggedFields();
    expect(skipAll.int8()).toBe(0x2a);
  });

  test('a reader cannot run past the end of a tagged field', () => {
    const r = new Reader(hex('01 00 02 0000 00000000'));
    expect(() => r.taggedFields(() => (r.int32(), true))).toThrow(/truncated/);
  });

  test('a field read short of its size is a protocol error', () => {
    const r = new Reader(hex('01 00 04 00000000'));
    expect(() => r.taggedFields(() => (r.int16(), true))).toThrow(/read 2 of its 4 bytes/);
  });

  test('a size past the end of the input is a protocol error', () => {
    expect(() => new Reader(hex('01 00 09 00')).taggedFields()).toThrow(KafkaProtocolError);
  });
});

describe('Writer buffer management', () => {
  test('grows past its initial size without losing bytes', () => {
    const w = new Writer(16);
    for (let i = 0; i < 1000; i++) w.int32(i);
    const r = new Reader(w.toBuffer());
    for (let i = 0; i < 1000; i++) expect(r.int32()).toBe(i);
  });

  test('reserves an int32 for a frame size and fills it in later', () => {
    const w = new Writer();
    const at = w.reserveInt32();
    w.string('hello');
    w.int32At(at, w.length - 4);
    expect(w.toBuffer()).toEqual(hex('00000007 0005 68656c6c6f'));
    expect(() => w.int32At(w.length, 0)).toThrow(RangeError);
  });

  test('a Reader can start and end inside a buffer', () => {
    const r = new Reader(hex('ff 0001 ff'), 1, 3);
    expect(r.int16()).toBe(1);
    expect(r.remaining).toBe(0);
    expect(() => r.int8()).toThrow(KafkaProtocolError);
    expect(() => new Reader(hex('00'), 0, 2)).toThrow(RangeError);
  });
});
