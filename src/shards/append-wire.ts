/**
 * Appends on the wire: the hot path's request and reply as packed fields, no JSON (protocol.ts).
 *
 *   request: u8 flags | u8 kind | u8 origin | str name | [str contentType] | [str producerId, u16 epoch, u32 seq]
 *            | [f64 matchSeq] | [str writerSeq] | payload
 *            flags: 1 close, 2 contentType, 4 producer, 8 matchSeq, 16 writerSeq, 32 ownBuffer
 *            kind 0 records: records (below); kind 1 json, kind 2 batches: a blob (wire.ts: u32 length | bytes,
 *            or, moved, where in which transferred buffer; 32: the batches' own buffer was moved)
 *   reply:   u8 flags | f64 startSeq | f64 nextSeq | f64 timestamp | [f64 producerLastSeq]
 *            flags: 1 closed, 2 duplicate, 4 producerLastSeq
 *
 * Records are packed like Kafka records, without varints:
 *
 *   u32 count, then per record: i32 keyLen | key | i32 valueLen | value | i32 headerCount | (i32 kLen | k | i32 vLen | v)*
 *
 * Lengths of -1 are null. On the worker every byte field is a view into the transferred message,
 * which that thread owns: the shard copies what it keeps into its log frame, once.
 */
import { type RecordInput } from '../util/record-batch';
import { type AppendOrigin, type AppendParams, type AppendPayload, type AppendResult } from './types';
import { type Reader, type Writer } from './wire';

const CLOSE = 1;
const CONTENT_TYPE = 2;
const PRODUCER = 4;
const MATCH_SEQ = 8;
const WRITER_SEQ = 16;
const OWN_BUFFER = 32;

const KINDS: ReadonlyArray<AppendPayload['kind']> = ['records', 'json', 'batches'];
const ORIGINS: readonly AppendOrigin[] = ['http', 'ds', 'kafka'];
const EMPTY = Buffer.alloc(0);

export function writeRecords(w: Writer, records: readonly RecordInput[]): void {
  w.u32(records.length);
  for (const r of records) {
    w.bytes(r.key);
    w.bytes(r.value);
    const hs = r.headers ?? [];
    w.i32(hs.length);
    for (const [k, v] of hs) {
      w.bytes(k);
      w.bytes(v);
    }
  }
}

/** Records whose byte fields are views into the message. */
export function readRecords(r: Reader): RecordInput[] {
  const count = r.u32();
  const out: RecordInput[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const key = r.bytes();
    const value = r.bytes();
    const hc = r.i32();
    let headers: Array<[Uint8Array, Uint8Array | null]> | null = null;
    if (hc > 0) {
      headers = [];
      for (let j = 0; j < hc; j++) headers.push([r.bytes() ?? EMPTY, r.bytes()]);
    }
    out[i] = { key, value, headers };
  }
  return out;
}

/** Bytes the payload takes on the wire: what an append hands to its shard (ShardClient.appended). */
export function payloadBytes(p: AppendPayload): number {
  if (p.kind !== 'records') return p.body.length;
  let size = 4;
  for (const r of p.records) {
    size += 12 + (r.key?.length ?? 0) + (r.value?.length ?? 0);
    for (const [k, v] of r.headers ?? []) size += 8 + k.length + (v?.length ?? 0);
  }
  return size;
}

export const appendReq = {
  write(w: Writer, p: AppendParams): void {
    const contentType = p.contentType;
    const producer = p.producer ?? null;
    const matchSeq = p.matchSeq ?? null;
    const writerSeq = p.writerSeq ?? null;
    let flags = p.close ? CLOSE : 0;
    if (contentType !== null) flags |= CONTENT_TYPE;
    if (producer !== null) flags |= PRODUCER;
    if (matchSeq !== null) flags |= MATCH_SEQ;
    if (writerSeq !== null) flags |= WRITER_SEQ;
    const d = p.payload;
    // Whether the body's buffer was moved is known once it is written: its flag is set then.
    const flagsAt = w.pos;
    w.u8(flags);
    w.u8(KINDS.indexOf(p.payload.kind));
    w.u8(ORIGINS.indexOf(p.origin));
    w.str(p.name);
    if (contentType !== null) w.str(contentType);
    if (producer !== null) {
      w.str(producer.id);
      w.u16(producer.epoch);
      w.u32(producer.seq);
    }
    if (matchSeq !== null) w.f64(matchSeq);
    if (writerSeq !== null) w.str(writerSeq);
    if (d.kind === 'records') writeRecords(w, d.records);
    else if (d.kind === 'json') w.blob(d.body);
    else if (w.blob(d.body, d.ownBuffer === true)) w.buf[flagsAt] = flags | OWN_BUFFER;
  },

  read(r: Reader): AppendParams {
    const flags = r.u8();
    const kind = KINDS[r.u8()];
    const origin = ORIGINS[r.u8()];
    if (kind === undefined || origin === undefined) throw new Error('wire: an append of unknown kind or origin');
    const name = r.str();
    const contentType = (flags & CONTENT_TYPE) !== 0 ? r.str() : null;
    const producer = (flags & PRODUCER) !== 0 ? { id: r.str(), epoch: r.u16(), seq: r.u32() } : null;
    const matchSeq = (flags & MATCH_SEQ) !== 0 ? r.f64() : null;
    const writerSeq = (flags & WRITER_SEQ) !== 0 ? r.str() : null;
    const payload: AppendPayload = kind === 'records' ? { kind, records: readRecords(r) } : kind === 'json' ? { kind, body: r.blob() } : (flags & OWN_BUFFER) !== 0 ? { kind, body: r.blob(), ownBuffer: true } : { kind, body: r.blob() };
    return { name, origin, payload, contentType, close: (flags & CLOSE) !== 0, producer, matchSeq, writerSeq };
  },
};

const CLOSED = 1;
const DUPLICATE = 2;
const LAST_SEQ = 4;

/** Appends' and trims' result. */
export const appendRes = {
  write(w: Writer, v: AppendResult): void {
    const last = v.producerLastSeq;
    w.u8((v.closed ? CLOSED : 0) | (v.duplicate === true ? DUPLICATE : 0) | (last !== undefined ? LAST_SEQ : 0));
    w.f64(v.startSeq);
    w.f64(v.nextSeq);
    w.f64(v.timestamp);
    if (last !== undefined) w.f64(last);
  },

  read(r: Reader): AppendResult {
    const flags = r.u8();
    const out: AppendResult = { startSeq: r.f64(), nextSeq: r.f64(), timestamp: r.f64(), closed: (flags & CLOSED) !== 0 };
    if ((flags & DUPLICATE) !== 0) out.duplicate = true;
    if ((flags & LAST_SEQ) !== 0) out.producerLastSeq = r.f64();
    return out;
  },
};
