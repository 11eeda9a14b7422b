/** The batch layouts of sdk/svc_connector.h (little-endian), host side. */
import type { SinkRecord, SourceBatch, SourceRecord } from '../plugin-api';

/** Encodes sink records: u32 count, then per record u16 topic_len, topic, i32 partition, i64 offset, i64 timestamp, i32 key_len (-1 none), key, u32 value_len, value. */
export function encodeSinkBatch(records: SinkRecord[]): Buffer {
  // Hot path (one call per plugin write): topics are encoded once per batch, and 64-bit fields
  // are written as two 32-bit halves (offsets and timestamps stay below 2^53) to avoid BigInt.
  const topics = new Map<string, Buffer>();
  let size = 4;
  let hasHeaders = false;
  for (const r of records) {
    hasHeaders ||= Object.keys(r.headers).length > 0;
    let t = topics.get(r.topic);
    if (t === undefined) topics.set(r.topic, (t = Buffer.from(r.topic)));
    size += 2 + t.length + 4 + 8 + 8 + 4 + (r.key?.length ?? 0) + 4 + r.value.length;
  }
  const b = Buffer.allocUnsafe(size);
  let o = b.writeUInt32LE(records.length, 0);
  const int64 = (v: number): void => {
    b.writeUInt32LE(v >>> 0, o);
    b.writeInt32LE(Math.floor(v / 0x1_0000_0000), o + 4);
    o += 8;
  };
  for (const r of records) {
    const t = topics.get(r.topic)!;
    o = b.writeUInt16LE(t.length, o);
    o += t.copy(b, o);
    o = b.writeInt32LE(r.partition, o);
    int64(Number(r.offset));
    int64(Math.trunc(r.timestamp));
    o = b.writeInt32LE(r.key === null ? -1 : r.key.length, o);
    if (r.key !== null) o += r.key.copy(b, o);
    o = b.writeUInt32LE(r.value.length, o);
    o += r.value.copy(b, o);
  }
  return hasHeaders ? Buffer.concat([b, encodeHeaderTrailer(records)]) : b;
}

/** "SVCH" read as a little-endian u32: marks the optional headers trailer of a sink batch. */
export const HEADERS_MAGIC = 0x48435653;

/**
 * Record headers go in a trailer after the last record (added in SDK 1.0 without changing the
 * record layout): `u32 "SVCH"`, then per record, in order, `u16 header_count` and per header
 * `u16 name_len, name, u32 value_len, value`. A reader from before the trailer reads `count`
 * records and never looks past them, so plugins built against the earlier header keep working
 * with the same SDK marker. Sent only when some record has a header.
 */
function encodeHeaderTrailer(records: SinkRecord[]): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0]!.writeUInt32LE(HEADERS_MAGIC, 0);
  for (const r of records) {
    const entries = Object.entries(r.headers).slice(0, 0xffff);
    const n = Buffer.alloc(2);
    n.writeUInt16LE(entries.length, 0);
    parts.push(n);
    for (const [k, v] of entries) {
      const name = Buffer.from(k).subarray(0, 0xffff);
      const value = Buffer.from(v);
      const h = Buffer.alloc(2);
      h.writeUInt16LE(name.length, 0);
      const l = Buffer.alloc(4);
      l.writeUInt32LE(value.length, 0);
      parts.push(h, name, l, value);
    }
  }
  return Buffer.concat(parts);
}

/**
 * Decodes a source batch: u32 count, u32 state_len, state, then per record i32 key_len, key,
 * u32 value_len, value; then optionally the headers trailer of the sink batch layout (u32 "SVCH",
 * per record u16 header_count and per header u16 name_len, name, u32 value_len, value), written
 * by the SDK's svc_source_add_h. Header values are read as UTF-8.
 */
export function decodeSourceBatch(b: Buffer): SourceBatch {
  const fail = (): never => {
    throw new Error(`plugin returned a malformed source batch (${b.length} bytes)`);
  };
  if (b.length < 8) fail();
  const count = b.readUInt32LE(0);
  const stateLen = b.readUInt32LE(4);
  let o = 8;
  if (o + stateLen > b.length) fail();
  const state = Buffer.from(b.subarray(o, o + stateLen));
  o += stateLen;
  const records: SourceRecord[] = [];
  for (let i = 0; i < count; i++) {
    if (o + 4 > b.length) fail();
    const kl = b.readInt32LE(o);
    o += 4;
    let key: Buffer | null = null;
    if (kl >= 0) {
      if (o + kl > b.length) fail();
      key = Buffer.from(b.subarray(o, o + kl));
      o += kl;
    }
    if (o + 4 > b.length) fail();
    const vl = b.readUInt32LE(o);
    o += 4;
    if (o + vl > b.length) fail();
    records.push({ key, value: Buffer.from(b.subarray(o, o + vl)) });
    o += vl;
  }
  if (o + 4 <= b.length && b.readUInt32LE(o) === HEADERS_MAGIC) {
    o += 4;
    for (const r of records) {
      if (o + 2 > b.length) fail();
      const n = b.readUInt16LE(o);
      o += 2;
      if (n === 0) continue;
      const headers: Record<string, string> = {};
      for (let i = 0; i < n; i++) {
        if (o + 2 > b.length) fail();
        const nl = b.readUInt16LE(o);
        if (o + 2 + nl + 4 > b.length) fail();
        const name = b.toString('utf8', o + 2, o + 2 + nl);
        o += 2 + nl;
        const hl = b.readUInt32LE(o);
        o += 4;
        if (o + hl > b.length) fail();
        headers[name] = b.toString('utf8', o, o + hl);
        o += hl;
      }
      r.headers = headers;
    }
  }
  return { records, state };
}
