/**
 * etcd's Txn request and response as etcd-txn-wire.ts writes and reads them, checked against
 * protobufjs's reflection of etcd's own rpc.proto (the copy the `etcd3` package ships): what the
 * hand-written encoder writes decodes there to the same request, and what reflection encodes
 * as an answer decodes here to the same result. The real etcd tests (ledger, meta store, faults)
 * then exercise the same path against etcd itself.
 */
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { decodeRange, decodeTxn, encodeRange, encodeReadTxn, encodeTxn, prefixEnd } from '../../src/actors/meta/etcd/etcd-txn-wire';
import { type EtcdCompare, type EtcdOp } from '../../src/actors/meta/etcd/etcd-link';

const PROTO = path.join(path.dirname(require.resolve('etcd3/package.json')), 'proto', 'rpc.proto');
let TxnRequest: protobuf.Type;
let TxnResponse: protobuf.Type;
let RangeRequest: protobuf.Type;
let RangeResponse: protobuf.Type;
beforeAll(async () => {
  const root = await protobuf.load(PROTO);
  TxnRequest = root.lookupType('etcdserverpb.TxnRequest');
  TxnResponse = root.lookupType('etcdserverpb.TxnResponse');
  RangeRequest = root.lookupType('etcdserverpb.RangeRequest');
  RangeResponse = root.lookupType('etcdserverpb.RangeResponse');
});

type Plain = Record<string, unknown>;
const b = (s: string): Buffer => Buffer.from(s, 'utf8');
/**
 * Reflection's view of a request: bytes as Buffers, 64-bit numbers as decimal strings, enums as
 * numbers, proto3 defaults filled in (an absent field reads as its zero, as etcd reads it), and
 * the oneof member that is set named.
 */
const asObject = (bytes: Uint8Array): Plain => TxnRequest.toObject(TxnRequest.decode(bytes), { longs: String, bytes: Buffer, defaults: true, oneofs: true }) as Plain;

it('writes every kind of compare as etcd reads it', () => {
  const compare: EtcdCompare[] = [
    { key: 'a/mod', modRevision: 123_456_789_012 },
    { key: 'a/absent', absent: true },
    { key: 'a/present', present: true },
    { key: 'a/value', value: b('1:7') },
    { prefix: 'r/obj/', empty: true },
  ];
  const got = asObject(encodeTxn(compare, [], [])).compare as Plain[];
  expect(got).toHaveLength(5);
  // result: 0 Equal, 1 Greater; target: 1 Create, 2 Mod, 3 Value.
  // The oneof member is set even when it is 0: etcd tells "create_revision 0" from "no target".
  expect(got[0]).toEqual({ result: 0, target: 2, key: b('a/mod'), targetUnion: 'modRevision', modRevision: '123456789012', rangeEnd: Buffer.alloc(0) });
  expect(got[1]).toEqual({ result: 0, target: 1, key: b('a/absent'), targetUnion: 'createRevision', createRevision: '0', rangeEnd: Buffer.alloc(0) });
  expect(got[2]).toEqual({ result: 1, target: 1, key: b('a/present'), targetUnion: 'createRevision', createRevision: '0', rangeEnd: Buffer.alloc(0) });
  expect(got[3]).toEqual({ result: 0, target: 3, key: b('a/value'), targetUnion: 'value', value: b('1:7'), rangeEnd: Buffer.alloc(0) });
  expect(got[4]).toEqual({ result: 0, target: 1, key: b('r/obj/'), targetUnion: 'createRevision', createRevision: '0', rangeEnd: b('r/obj0') });
});

it('writes puts (with 64-bit leases), deletes, prefix deletes and gets in both branches, in order', () => {
  const lease = '7587885043429213184'; // above 2^53: must not pass through a double
  const success: EtcdOp[] = [
    { put: 'n/1', value: b('{"x":1}'), lease },
    { put: 'n/2', value: Buffer.alloc(0) },
    { delete: 'd/1' },
    { deletePrefix: 'i/s/' },
  ];
  const failure: EtcdOp[] = [{ get: 'f/s' }, { get: 'i/s/1.0' }];
  const got = asObject(encodeTxn([], success, failure));
  expect(got.compare).toEqual([]);
  const put = (key: string, value: Buffer, l = '0'): Plain => ({ request: 'requestPut', requestPut: { key: b(key), value, lease: l, prevKv: false, ignoreValue: false, ignoreLease: false } });
  expect(got.success).toMatchObject([
    put('n/1', b('{"x":1}'), lease),
    put('n/2', Buffer.alloc(0)),
    { request: 'requestDeleteRange', requestDeleteRange: { key: b('d/1'), rangeEnd: Buffer.alloc(0) } },
    { request: 'requestDeleteRange', requestDeleteRange: { key: b('i/s/'), rangeEnd: b('i/s0') } },
  ]);
  expect(got.failure).toMatchObject([
    { request: 'requestRange', requestRange: { key: b('f/s'), rangeEnd: Buffer.alloc(0), limit: '0', countOnly: false } },
    { request: 'requestRange', requestRange: { key: b('i/s/1.0'), rangeEnd: Buffer.alloc(0) } },
  ]);
});

it('keys and values are bytes: UTF-8 names and binary values survive', () => {
  const value = Buffer.from([0, 255, 10, 13, 128]);
  const got = asObject(encodeTxn([{ key: 'f/ström', value }], [{ put: 'f/ström', value }], []));
  expect((got.compare as Plain[])[0]!.key).toEqual(b('f/ström'));
  expect((got.success as Plain[])[0]).toMatchObject({ requestPut: { key: b('f/ström'), value } });
});

it('reads an answer: revision, outcome, the first pair of each get, deleted counts; other ops skipped', () => {
  const kv = (key: string, value: string, mod: string, create: string, lease?: string): Plain => ({ key: b(key), value: b(value), modRevision: mod, createRevision: create, version: '3', ...(lease ? { lease } : {}) });
  const message = TxnResponse.fromObject({
    header: { clusterId: '14841639068965178418', memberId: '10276657743932975437', revision: '9007199254740000', raftTerm: '2' },
    succeeded: false,
    responses: [
      { responseRange: { header: { revision: '5' }, kvs: [kv('f/s', '2:4', '88', '17', '7587885043429213184'), kv('f/t', 'x', '1', '1')], more: true, count: '2' } },
      { responsePut: { header: { revision: '5' } } },
      { responseRange: { header: { revision: '5' }, kvs: [] } },
      { responseDeleteRange: { header: { revision: '5' }, deleted: '12' } },
    ],
  });
  const got = decodeTxn(TxnResponse.encode(message).finish());
  expect(got.succeeded).toBe(false);
  expect(got.revision).toBe(9007199254740000);
  expect(got.gets).toEqual([{ key: 'f/s', value: b('2:4'), modRevision: 88, createRevision: 17, lease: '7587885043429213184' }, null]);
  expect(got.deleted).toEqual([12]);
  // Each range op's whole answer too, in order (readMany's pages).
  expect(got.ranges.map((r) => [r.kvs.map((x) => x.key), r.more])).toEqual([[['f/s', 'f/t'], true], [[], false]]);

  const ok = decodeTxn(TxnResponse.encode(TxnResponse.fromObject({ header: { revision: '42' }, succeeded: true, responses: [{ responsePut: {} }] })).finish());
  expect(ok).toEqual({ succeeded: true, revision: 42, gets: [], ranges: [], deleted: [] });
});

it('writes a read-only transaction as etcd reads it: no compares, a Range per read (a key; a page of a prefix from a key, with its limit)', () => {
  const got = asObject(encodeReadTxn([{ get: 'm/s' }, { from: 'i/s/0005', prefix: 'i/s/', limit: 64 }, { from: 'i/t/', prefix: 'i/t/', limit: 0 }]));
  expect(got.compare).toEqual([]);
  expect(got.failure).toEqual([]);
  const ranges = (got.success as Plain[]).map((op) => op.requestRange as Plain);
  expect(ranges.map((r) => [r.key, r.rangeEnd, r.limit, r.serializable])).toEqual([
    [b('m/s'), Buffer.alloc(0), '0', false],
    [b('i/s/0005'), b('i/s0'), '64', false],
    [b('i/t/'), b('i/t0'), '0', false],
  ]);
});

it('a truncated or foreign answer is an error, never a made-up result', () => {
  const whole = TxnResponse.encode(TxnResponse.fromObject({ header: { revision: '42' }, succeeded: true, responses: [{ responseRange: { kvs: [{ key: b('k'), value: b('v') }] } }] })).finish();
  for (let cut = 1; cut < whole.length; cut++) {
    let result: unknown;
    try {
      result = decodeTxn(whole.subarray(0, cut));
    } catch (err) {
      expect(err).toBeInstanceOf(Error);
      continue;
    }
    // A cut that ends between fields is a shorter, valid message: it must not claim what was cut away.
    expect(result).not.toEqual(decodeTxn(whole));
  }
  expect(() => decodeTxn(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow();
});

it('writes a Range as etcd reads it (linearizable: serializable false), and reads its answer: every pair, more, count, revision', () => {
  const q = RangeRequest.toObject(RangeRequest.decode(encodeRange({ key: b('i/s/'), rangeEnd: prefixEnd('i/s/'), limit: 1000, revision: 123_456_789_012, keysOnly: true })), { longs: String, bytes: Buffer, defaults: true }) as Plain;
  expect(q).toMatchObject({ key: b('i/s/'), rangeEnd: b('i/s0'), limit: '1000', revision: '123456789012', keysOnly: true, countOnly: false, serializable: false });
  const one = RangeRequest.toObject(RangeRequest.decode(encodeRange({ key: b('m/x') })), { longs: String, bytes: Buffer, defaults: true }) as Plain;
  expect(one).toMatchObject({ key: b('m/x'), rangeEnd: Buffer.alloc(0), limit: '0', revision: '0', keysOnly: false, countOnly: false });
  expect(RangeRequest.toObject(RangeRequest.decode(encodeRange({ key: b('r/'), rangeEnd: b('r0'), countOnly: true })), { defaults: true })).toMatchObject({ countOnly: true });

  const kv = (key: string, value: string, mod: string, create: string): Plain => ({ key: b(key), value: b(value), modRevision: mod, createRevision: create, version: '1' });
  const answer = RangeResponse.encode(RangeResponse.fromObject({ header: { revision: '9007199254740000', raftTerm: '3' }, kvs: [kv('i/s/1', 'a', '7', '7'), kv('i/s/2', '', '9', '8')], more: true, count: '5' })).finish();
  expect(decodeRange(answer)).toEqual({
    revision: 9007199254740000,
    kvs: [
      { key: 'i/s/1', value: b('a'), modRevision: 7, createRevision: 7, lease: '0' },
      { key: 'i/s/2', value: Buffer.alloc(0), modRevision: 9, createRevision: 8, lease: '0' },
    ],
    more: true,
    count: 5,
  });
  expect(decodeRange(RangeResponse.encode(RangeResponse.fromObject({ header: { revision: '4' } })).finish())).toEqual({ revision: 4, kvs: [], more: false, count: 0 });
  expect(() => decodeRange(answer.subarray(0, answer.length - 3))).toThrow();
});

it('reads a pair in place: revisions past 32 bits exact, a UTF-8 key, a value of its own (not a view of the answer)', () => {
  const answer = Buffer.from(
    RangeResponse.encode(
      RangeResponse.fromObject({
        header: { revision: '9007199254740991' },
        kvs: [{ key: b('i/ström/1'), value: b('{"o":"g/1"}'), modRevision: '4398046511104', createRevision: '2147483648', version: '1' }],
      }),
    ).finish(),
  );
  const got = decodeRange(answer);
  expect(got.revision).toBe(Number.MAX_SAFE_INTEGER);
  expect(got.kvs).toEqual([{ key: 'i/ström/1', value: b('{"o":"g/1"}'), modRevision: 2 ** 42, createRevision: 2 ** 31, lease: '0' }]);
  answer.fill(0); // the answer's buffer is reused or dropped: what was read stays as read
  expect(got.kvs[0]!.value).toEqual(b('{"o":"g/1"}'));
  // A varint cut at the end of the answer is an error, not a revision made up of what is there.
  const cut = RangeResponse.encode(RangeResponse.fromObject({ header: { revision: '300' } })).finish();
  expect(() => decodeRange(cut.subarray(0, cut.length - 1))).toThrow();
});

it('prefixEnd is the first key after the prefix', () => {
  expect(prefixEnd('a/')).toEqual(b('a0'));
  expect(prefixEnd('a\u00ff')).toEqual(Buffer.from([0x61, 0xc3, 0xc0]));
  expect(prefixEnd('')).toEqual(Buffer.from([0]));
});
