import { i16be, i32be, u32be, u48be } from '../../src/util/be-read';

describe('big-endian reads', () => {
  it('read what Buffer#read* reads, at every offset, for edge and random values', () => {
    const buf = Buffer.alloc(64);
    const values = [0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff];
    for (let o = 0; o + 8 <= buf.length; o += 3) {
      for (const v of [...values, Math.floor(Math.random() * 2 ** 32)]) {
        buf.writeUInt32BE(v >>> 0, o);
        expect(u32be(buf, o)).toBe(buf.readUInt32BE(o));
        expect(i32be(buf, o)).toBe(buf.readInt32BE(o));
        expect(i16be(buf, o)).toBe(buf.readInt16BE(o));
      }
      for (const v of [0, 1, 2 ** 32, 2 ** 32 + 5, 2 ** 47 + 3, 2 ** 48 - 1]) {
        buf.writeUIntBE(v, o, 6);
        expect(u48be(buf, o)).toBe(v);
        expect(u48be(buf, o)).toBe(buf.readUIntBE(o, 6));
      }
    }
  });
});
