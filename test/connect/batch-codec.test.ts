/** The SDK batch layouts (src/connect/sdk/svc_connector.h), host side, read back field by field. */
import { decodeSourceBatch, encodeSinkBatch } from '../../src/connect/native/batch-codec';

test('a sink batch has the documented little-endian layout, 64-bit offsets and timestamps included', () => {
  const recs = [
    { topic: 'orders', partition: 3, offset: String(2 ** 40 + 5), key: Buffer.from('k'), value: Buffer.from('v1'), timestamp: 1_795_500_044_136, headers: {} },
    { topic: 'refunds', partition: 0, offset: '0', key: null, value: Buffer.alloc(0), timestamp: 0, headers: {} },
  ];
  const b = encodeSinkBatch(recs);
  let o = 0;
  expect(b.readUInt32LE(o)).toBe(2);
  o += 4;
  for (const r of recs) {
    const tl = b.readUInt16LE(o);
    o += 2;
    expect(b.subarray(o, o + tl).toString()).toBe(r.topic);
    o += tl;
    expect(b.readInt32LE(o)).toBe(r.partition);
    expect(b.readBigInt64LE(o + 4)).toBe(BigInt(r.offset));
    expect(b.readBigInt64LE(o + 12)).toBe(BigInt(r.timestamp));
    o += 20;
    const kl = b.readInt32LE(o);
    o += 4;
    expect(kl).toBe(r.key === null ? -1 : r.key.length);
    if (kl > 0) o += kl;
    const vl = b.readUInt32LE(o);
    o += 4;
    expect(b.subarray(o, o + vl).equals(r.value)).toBe(true);
    o += vl;
  }
  expect(o).toBe(b.length);
});

test('a source batch decodes with its state, null and present keys; a truncated one is refused', () => {
  const state = Buffer.from('{"offset":9}');
  const parts: Buffer[] = [Buffer.alloc(8), state];
  parts[0]!.writeUInt32LE(2, 0);
  parts[0]!.writeUInt32LE(state.length, 4);
  const rec = (key: Buffer | null, value: Buffer): Buffer => {
    const h = Buffer.alloc(4);
    h.writeInt32LE(key === null ? -1 : key.length);
    const v = Buffer.alloc(4);
    v.writeUInt32LE(value.length);
    return Buffer.concat([h, key ?? Buffer.alloc(0), v, value]);
  };
  parts.push(rec(null, Buffer.from('a')), rec(Buffer.from('key'), Buffer.from('bb')));
  const all = Buffer.concat(parts);
  expect(decodeSourceBatch(all)).toEqual({ state, records: [{ key: null, value: Buffer.from('a') }, { key: Buffer.from('key'), value: Buffer.from('bb') }] });
  expect(() => decodeSourceBatch(all.subarray(0, all.length - 1))).toThrow(/malformed source batch/);
});

test('a source batch with the headers trailer gives each record its headers; a record with none gets none', () => {
  const state = Buffer.from('s');
  const head = Buffer.alloc(8);
  head.writeUInt32LE(2, 0);
  head.writeUInt32LE(state.length, 4);
  const rec = (value: string): Buffer => {
    const b = Buffer.alloc(8 + value.length);
    b.writeInt32LE(-1, 0);
    b.writeUInt32LE(value.length, 4);
    b.write(value, 8);
    return b;
  };
  const u16 = (n: number): Buffer => Buffer.from([n & 0xff, n >> 8]);
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n, 0);
    return b;
  };
  const header = (name: string, value: string): Buffer => Buffer.concat([u16(Buffer.byteLength(name)), Buffer.from(name), u32(Buffer.byteLength(value)), Buffer.from(value)]);
  const trailer = Buffer.concat([u32(0x48435653), u16(0), u16(2), header('a', '1'), header('é', 'ü')]);
  const batch = decodeSourceBatch(Buffer.concat([head, state, rec('x'), rec('y'), trailer]));
  expect(batch.records.map((r) => r.headers)).toEqual([undefined, { a: '1', é: 'ü' }]);
  expect(() => decodeSourceBatch(Buffer.concat([head, state, rec('x'), rec('y'), trailer.subarray(0, trailer.length - 1)]))).toThrow('malformed source batch');
});
