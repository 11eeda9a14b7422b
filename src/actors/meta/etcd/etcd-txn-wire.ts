/**
 * etcd's Txn and Range requests and responses in protobuf (etcdserverpb, rpc.proto and kv.proto
 * of etcd 3.4), for the transactions and reads of etcd-link.ts, which it sends without the `etcd3` client: that
 * client goes through grpc-js and proto-loader's reflective (de)serialisation with every default
 * filled in and every 64-bit number turned into a string, about 0.4 ms of CPU per transaction on
 * this path (docs/cluster.md, "What an objects-mode append costs"). The only file that imports
 * protobufjs. Only the fields Svc writes and reads; numbers are those of the .proto files:
 *
 *   TxnRequest   { repeated Compare compare = 1; repeated RequestOp success = 2; repeated RequestOp failure = 3 }
 *   Compare      { CompareResult result = 1; CompareTarget target = 2; bytes key = 3;
 *                  oneof target_union { int64 create_revision = 5; int64 mod_revision = 6; bytes value = 7 }
 *                  bytes range_end = 64 }
 *   RequestOp    { oneof request { RangeRequest request_range = 1; PutRequest request_put = 2;
 *                  DeleteRangeRequest request_delete_range = 3 } }
 *   RangeRequest { bytes key = 1; bytes range_end = 2; int64 limit = 3 }   PutRequest { bytes key = 1; bytes value = 2; int64 lease = 3 }
 *   DeleteRangeRequest { bytes key = 1; bytes range_end = 2 }
 *
 *   TxnResponse  { ResponseHeader header = 1; bool succeeded = 2; repeated ResponseOp responses = 3 }
 *   ResponseHeader { int64 revision = 3 }
 *   ResponseOp   { oneof response { RangeResponse response_range = 1; PutResponse response_put = 2;
 *                  DeleteRangeResponse response_delete_range = 3 } }
 *   RangeResponse { repeated KeyValue kvs = 2; bool more = 3 }   DeleteRangeResponse { int64 deleted = 2 }
 *   KeyValue     { bytes key = 1; int64 create_revision = 2; int64 mod_revision = 3; bytes value = 5; int64 lease = 6 }
 *
 * And Auth/Authenticate (the token a transaction carries when etcd has auth enabled), at the end.
 */
import { type Long, Reader, Writer } from 'protobufjs/minimal';
import { keyAfterPrefix } from '../../../util/prefix-end';
import type { EtcdCompare, EtcdKv, EtcdOp, EtcdRead, EtcdTxnResult } from './etcd-link';

// Compare.CompareResult and Compare.CompareTarget.
const EQUAL = 0;
const GREATER = 1;
const CREATE = 1;
const MOD = 2;
const VALUE = 3;

/** etcd's range_end for every key that starts with `prefix` (`\0`, "to the end", when there is no key after it). */
export function prefixEnd(prefix: string): Buffer {
  return keyAfterPrefix(Buffer.from(prefix, 'utf8')) ?? Buffer.from([0]);
}

// Field tags: (field number << 3) | wire type (0 varint, 2 length-delimited).
const tag = (field: number, wire: 0 | 2): number => (field << 3) | wire;

/** A Compare's result, target and key (fields 1–3); the target's value follows. */
function compareHead(w: Writer, result: number, target: number, key: string): Writer {
  return w.uint32(tag(1, 0)).int32(result).uint32(tag(2, 0)).int32(target).uint32(tag(3, 2)).string(key);
}

function writeCompare(w: Writer, c: EtcdCompare): void {
  w.uint32(tag(1, 2)).fork();
  // create_revision 0 is written although it is 0: it is in a oneof, and etcd tells it from "no target".
  if ('prefix' in c) {
    // Over a range etcd compares every key, and a range without keys as one absent key (create
    // revision 0): "create revision = 0 over the prefix" holds exactly when it is empty. `from`
    // starts the range past the prefix's first keys (an object's reference marker: ledger.ts).
    compareHead(w, EQUAL, CREATE, c.from ?? c.prefix).uint32(tag(5, 0)).int64(0).uint32(tag(64, 2)).bytes(prefixEnd(c.prefix));
  } else if ('modRevision' in c) compareHead(w, EQUAL, MOD, c.key).uint32(tag(6, 0)).int64(c.modRevision);
  else if ('absent' in c) compareHead(w, EQUAL, CREATE, c.key).uint32(tag(5, 0)).int64(0); // the key does not exist
  else if ('value' in c) compareHead(w, EQUAL, VALUE, c.key).uint32(tag(7, 2)).bytes(c.value);
  else compareHead(w, GREATER, CREATE, c.key).uint32(tag(5, 0)).int64(0); // present: created at some revision
  w.ldelim();
}

function writeOp(w: Writer, field: 2 | 3, op: EtcdOp): void {
  w.uint32(tag(field, 2)).fork();
  if ('put' in op) {
    w.uint32(tag(2, 2)).fork().uint32(tag(1, 2)).string(op.put).uint32(tag(2, 2)).bytes(op.value);
    if (op.lease !== undefined && op.lease !== '0') w.uint32(tag(3, 0)).int64(op.lease);
  } else if ('delete' in op) {
    w.uint32(tag(3, 2)).fork().uint32(tag(1, 2)).string(op.delete);
  } else if ('deletePrefix' in op) {
    w.uint32(tag(3, 2)).fork().uint32(tag(1, 2)).string(op.deletePrefix).uint32(tag(2, 2)).bytes(prefixEnd(op.deletePrefix));
  } else if ('deleteFrom' in op) {
    // Keys in [deleteFrom, to): a range of keys in one operation.
    w.uint32(tag(3, 2)).fork().uint32(tag(1, 2)).string(op.deleteFrom).uint32(tag(2, 2)).string(op.to);
  } else {
    w.uint32(tag(1, 2)).fork().uint32(tag(1, 2)).string(op.get);
  }
  w.ldelim().ldelim();
}

/**
 * A read-only TxnRequest: no compares, one RangeRequest per read (one key, or a page of a prefix
 * from a key), all answered at one revision in one round trip (etcd-link.ts `readMany`).
 */
export function encodeReadTxn(reads: readonly EtcdRead[]): Uint8Array {
  const w = Writer.create();
  for (const q of reads) {
    w.uint32(tag(2, 2)).fork().uint32(tag(1, 2)).fork();
    if ('get' in q) w.uint32(tag(1, 2)).string(q.get);
    else {
      w.uint32(tag(1, 2)).string(q.from).uint32(tag(2, 2)).bytes(prefixEnd(q.prefix));
      if (q.limit > 0) w.uint32(tag(3, 0)).int64(q.limit);
      if (q.keysOnly === true) w.uint32(tag(8, 0)).bool(true);
    }
    w.ldelim().ldelim();
  }
  return w.finish();
}

/** A TxnRequest, protobuf-encoded. */
export function encodeTxn(compare: readonly EtcdCompare[], success: readonly EtcdOp[], failure: readonly EtcdOp[]): Uint8Array {
  const w = Writer.create();
  for (const c of compare) writeCompare(w, c);
  for (const op of success) writeOp(w, 2, op);
  for (const op of failure) writeOp(w, 3, op);
  return w.finish();
}

/** An int64 as protobufjs reads it: its two halves (a Long), or a number when `long` is not installed. */
type Int64 = Long | number;
/** Lease ids use all 64 bits: in decimal, as the etcd3 client gives them. */
const decimal = (v: Int64): string => (typeof v === 'number' ? String(v) : BigInt.asIntN(64, (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0)).toString());

/** The end of a length-delimited field that starts at the reader's position. */
const fieldEnd = (r: Reader): number => {
  const len = r.uint32();
  return r.pos + len;
};

/** What a KeyValue holds before its value is read: none (a shared empty buffer, never written to). */
const NO_VALUE = Buffer.alloc(0);

/**
 * A varint that holds a revision, a count or a number deleted (all below 2^53) as a number, read
 * in place: protobufjs's int64() makes a LongBits and a Long for each, and a compaction turn reads
 * tens of thousands of revisions a second (perf/README.md, "Objects mode").
 */
function readCount(r: Reader): number {
  const buf = r.buf;
  let pos = r.pos;
  let n = 0;
  let scale = 1;
  for (;;) {
    if (pos >= r.len) throw new RangeError('etcd answer: a varint runs past the end of its message');
    const b = buf[pos++]!;
    n += (b & 0x7f) * scale;
    if (b < 0x80) break;
    scale *= 128;
  }
  r.pos = pos;
  return n;
}

/** The reader's buffer as a Buffer (Reader.create keeps the Buffer it is given), to decode and copy from in place. */
const bufferOf = (r: Reader): Buffer => (Buffer.isBuffer(r.buf) ? r.buf : Buffer.from(r.buf.buffer, r.buf.byteOffset, r.buf.byteLength));

/** A length-delimited field's start in the reader's buffer; the reader moves past its end. */
function spanStart(r: Reader): number {
  const len = r.uint32();
  const start = r.pos;
  if (start + len > r.len) throw new RangeError('etcd answer: a field runs past the end of its message');
  r.pos = start + len;
  return start;
}

function readKv(r: Reader, end: number): EtcdKv {
  const kv: EtcdKv = { key: '', value: NO_VALUE, modRevision: 0, createRevision: 0, lease: '0' };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1: {
        // Decoded straight from the answer, with no copy of the key's bytes first.
        const start = spanStart(r);
        kv.key = bufferOf(r).toString('utf8', start, r.pos);
        break;
      }
      case 2:
        kv.createRevision = readCount(r);
        break;
      case 3:
        kv.modRevision = readCount(r);
        break;
      case 5: {
        // A copy of its own: a value may be kept long after the answer it came in.
        const start = spanStart(r);
        kv.value = Buffer.allocUnsafe(r.pos - start);
        bufferOf(r).copy(kv.value, 0, start, r.pos);
        break;
      }
      case 6:
        kv.lease = decimal(r.int64());
        break;
      default:
        r.skipType(t & 7);
    }
  }
  return kv;
}

/**
 * A RangeResponse in [reader's position, `end`) (a whole Range answer, or a Txn's range op):
 *
 *   RangeResponse { ResponseHeader header = 1; repeated KeyValue kvs = 2; bool more = 3; int64 count = 4 }
 */
function readRange(r: Reader, end: number): EtcdRangeResult {
  const out: EtcdRangeResult = { revision: 0, kvs: [], more: false, count: 0 };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        out.revision = readHeaderRevision(r);
        break;
      case 2:
        out.kvs.push(readKv(r, fieldEnd(r)));
        break;
      case 3:
        out.more = r.bool();
        break;
      case 4:
        out.count = readCount(r);
        break;
      default:
        r.skipType(t & 7);
    }
  }
  return out;
}

function readDeleted(r: Reader, end: number): number {
  let deleted = 0;
  while (r.pos < end) {
    const t = r.uint32();
    if (t >>> 3 === 2) deleted = readCount(r);
    else r.skipType(t & 7);
  }
  return deleted;
}

/** The revision of a ResponseHeader (`int64 revision = 3`) that starts at the reader's position. */
function readHeaderRevision(r: Reader): number {
  const end = fieldEnd(r);
  let revision = 0;
  while (r.pos < end) {
    const h = r.uint32();
    if (h >>> 3 === 3) revision = readCount(r);
    else r.skipType(h & 7);
  }
  return revision;
}

/** A TxnResponse; throws on a message that is not one (a truncated or foreign body). */
export function decodeTxn(body: Uint8Array): EtcdTxnResult {
  const r = Reader.create(body);
  const out: EtcdTxnResult = { succeeded: false, revision: 0, gets: [], ranges: [], deleted: [] };
  while (r.pos < r.len) {
    const t = r.uint32();
    switch (t >>> 3) {
      case 1:
        out.revision = readHeaderRevision(r);
        break;
      case 2:
        out.succeeded = r.bool();
        break;
      case 3: {
        const end = fieldEnd(r);
        while (r.pos < end) {
          const o = r.uint32();
          if ((o & 7) !== 2) {
            r.skipType(o & 7);
            continue;
          }
          const e = fieldEnd(r);
          // A `get` op names one key: its pair, or null; a read of a page keeps its whole answer.
          if (o >>> 3 === 1) {
            const range = readRange(r, e);
            out.gets.push(range.kvs[0] ?? null);
            out.ranges.push(range);
          }
          else if (o >>> 3 === 3) out.deleted.push(readDeleted(r, e));
          else r.pos = e;
        }
        break;
      }
      default:
        r.skipType(t & 7);
    }
  }
  return out;
}

/** A Range call (etcd-link.ts reads: one key, a page of a prefix, a count). */
export interface EtcdRangeRequest {
  key: Buffer;
  /** Keys in [key, rangeEnd); absent: `key` alone. */
  rangeEnd?: Buffer;
  /** At most this many pairs (0 or absent: no limit). */
  limit?: number;
  /** Read at this revision (0 or absent: the newest). */
  revision?: number;
  keysOnly?: boolean;
  countOnly?: boolean;
}

export interface EtcdRangeResult {
  revision: number;
  kvs: EtcdKv[];
  /** More pairs are in the range past the limit. */
  more: boolean;
  /** How many pairs the range holds (all of them, not only those returned). */
  count: number;
}

/**
 * A RangeRequest, protobuf-encoded (a linearizable read: `serializable` is left false):
 *
 *   RangeRequest { bytes key = 1; bytes range_end = 2; int64 limit = 3; int64 revision = 4;
 *                  bool keys_only = 8; bool count_only = 9 }
 */
export function encodeRange(q: EtcdRangeRequest): Uint8Array {
  const w = Writer.create().uint32(tag(1, 2)).bytes(q.key);
  if (q.rangeEnd !== undefined) w.uint32(tag(2, 2)).bytes(q.rangeEnd);
  if (q.limit !== undefined && q.limit > 0) w.uint32(tag(3, 0)).int64(q.limit);
  if (q.revision !== undefined && q.revision > 0) w.uint32(tag(4, 0)).int64(q.revision);
  if (q.keysOnly === true) w.uint32(tag(8, 0)).bool(true);
  if (q.countOnly === true) w.uint32(tag(9, 0)).bool(true);
  return w.finish();
}

/** A RangeResponse; throws on a message that is not one. */
export function decodeRange(body: Uint8Array): EtcdRangeResult {
  const r = Reader.create(body);
  return readRange(r, r.len);
}

/**
 * etcd's Auth/Authenticate, for the transaction channel's token (etcd-link.ts):
 *
 *   AuthenticateRequest  { string name = 1; string password = 2 }
 *   AuthenticateResponse { ResponseHeader header = 1; string token = 2 }
 */
export function encodeAuthenticate(name: string, password: string): Uint8Array {
  return Writer.create().uint32((1 << 3) | 2).string(name).uint32((2 << 3) | 2).string(password).finish();
}

/** The token of an AuthenticateResponse. */
export function decodeAuthenticate(body: Uint8Array): string {
  const r = Reader.create(body);
  let token = '';
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 2 && (t & 7) === 2) token = r.string();
    else r.skipType(t & 7);
  }
  if (token === '') throw new Error('etcd Authenticate answered no token');
  return token;
}
