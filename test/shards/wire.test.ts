/** The typed trip to the shard workers: every operation's encoding read back as written (protocol.ts, append-wire.ts, wire.ts). */
import { OPS, type OpName, type Req, type Res, opOf } from '../../src/shards/protocol';
import { payloadBytes } from '../../src/shards/append-wire';
import { type Reader, Writer, readEntries } from '../../src/shards/wire';
import { type AppendParams, type AppendResult, type ReadResult, type StreamInfo } from '../../src/shards/types';

interface Got {
  id: number;
  code: number;
  shard: number;
  r: Reader;
}

/** Write requests as ShardClient does and read them back as the worker does. */
function roundTrip<K extends OpName>(op: K, req: Req<K>): Req<K> {
  const w = new Writer(false);
  const mark = w.beginEntry(7, OPS[op].code, 3);
  OPS[op].req.write(w, req);
  w.endEntry(mark);
  const { message } = w.take();
  const out: Array<Req<K>> = [];
  readEntries(message, [], (id, code, shard, r) => {
    expect({ id, code, shard }).toEqual({ id: 7, code: OPS[op].code, shard: 3 });
    expect(opOf(code)).toBe(op);
    out.push(OPS[op].req.read(r));
  });
  expect(out).toHaveLength(1);
  return out[0]!;
}

function replyTrip<K extends OpName>(op: K, res: Res<K>, transferLarge = false): { res: Res<K>; extras: ArrayBuffer[] } {
  const w = new Writer(transferLarge);
  const mark = w.beginEntry(9, 0, 1);
  OPS[op].res.write(w, res);
  w.endEntry(mark);
  const { message, extras } = w.take();
  const got: Got[] = [];
  readEntries(message, extras, (id, code, shard, r) => got.push({ id, code, shard, r }));
  expect(got).toHaveLength(1);
  return { res: OPS[op].res.read(got[0]!.r), extras };
}

const rec = (value: string | null, key: string | null = null, headers: Array<[string, string | null]> | null = null) => ({
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  headers: headers === null ? null : headers.map(([k, v]): [Buffer, Buffer | null] => [Buffer.from(k), v === null ? null : Buffer.from(v)]),
});

describe('appends on the wire (packed fields)', () => {
  const cases: Array<[string, AppendParams]> = [
    ['one record', { name: '/w1', origin: 'http', payload: { kind: 'records', records: [rec('x'.repeat(100))] }, contentType: 'application/octet-stream', close: false, producer: null, matchSeq: null, writerSeq: null }],
    [
      'records with keys, headers and nulls, every option set',
      {
        name: '/flüsse/δ/😀',
        origin: 'ds',
        payload: { kind: 'records', records: [rec('a', 'k', [['h1', 'v1'], ['h2', null]]), rec(null), rec('', '')] },
        contentType: 'application/json; charset=utf-8',
        close: true,
        producer: { id: 'prödücer-1', epoch: 32767, seq: 2147483647 },
        matchSeq: 2 ** 53 - 1,
        writerSeq: 'seq-ü-0009',
      },
    ],
    ['a seal alone', { name: '/s', origin: 'http', payload: { kind: 'records', records: [] }, contentType: null, close: true, producer: null, matchSeq: 0, writerSeq: null }],
    ['a JSON batch', { name: '/j', origin: 'http', payload: { kind: 'json', body: Buffer.from('[{"value":"a"}]') }, contentType: null, close: false, producer: { id: 'p', epoch: 0, seq: 0 }, matchSeq: null, writerSeq: null }],
    ['an empty JSON batch', { name: '/j', origin: 'http', payload: { kind: 'json', body: Buffer.alloc(0) }, contentType: null, close: false, producer: null, matchSeq: null, writerSeq: null }],
    ['Kafka batches', { name: '/k', origin: 'kafka', payload: { kind: 'batches', body: Buffer.from([1, 2, 3, 4, 5]) }, contentType: null, close: false, producer: null, matchSeq: null, writerSeq: null }],
  ];

  test.each(cases)('%s', (_name, p) => {
    expect(roundTrip('append', p)).toEqual(p);
  });

  test('Kafka batches given up with their own buffer move beside the message, and arrive marked so', () => {
    // A large request frame's own buffer (frame-assembler.ts): the batch lies after the request's other fields.
    const frame = Buffer.allocUnsafeSlow(200 * 1024).fill(5);
    const body = frame.subarray(100);
    const p: AppendParams = { name: '/k', origin: 'kafka', payload: { kind: 'batches', body, ownBuffer: true }, contentType: null, close: false, producer: null, matchSeq: null, writerSeq: null };
    const w = new Writer(false);
    const mark = w.beginEntry(1, OPS.append.code, 0);
    OPS.append.req.write(w, p);
    w.endEntry(mark);
    const { message, extras } = w.take();
    expect(extras).toEqual([frame.buffer]);
    let got: AppendParams | null = null;
    readEntries(message, extras, (_id, _code, _shard, r) => (got = OPS.append.req.read(r)));
    const payload = (got as AppendParams | null)?.payload;
    expect(payload?.kind === 'batches' && payload.ownBuffer === true && payload.body.buffer === frame.buffer && payload.body.byteOffset === 100).toBe(true);
    expect(payload?.kind === 'batches' && payload.body.equals(Buffer.alloc(200 * 1024 - 100, 5))).toBe(true);
  });

  test('Kafka batches below the move threshold, or not given up, are copied and arrive unmarked', () => {
    for (const [size, ownBuffer] of [[1000, true], [200 * 1024, false]] as const) {
      const body = Buffer.allocUnsafeSlow(size).fill(9);
      const p: AppendParams = { name: '/k', origin: 'kafka', payload: { kind: 'batches', body, ownBuffer }, contentType: null, close: false, producer: null, matchSeq: null, writerSeq: null };
      const w = new Writer(false);
      const mark = w.beginEntry(1, OPS.append.code, 0);
      OPS.append.req.write(w, p);
      w.endEntry(mark);
      const { message, extras } = w.take();
      expect(extras).toHaveLength(0);
      let got: AppendParams | null = null;
      readEntries(message, extras, (_id, _code, _shard, r) => (got = OPS.append.req.read(r)));
      expect((got as AppendParams | null)?.payload).toEqual({ kind: 'batches', body });
    }
  });

  test('absent options arrive as null', () => {
    const p: AppendParams = { name: '/a', origin: 'http', payload: { kind: 'batches', body: Buffer.from('b') }, contentType: null, close: false };
    expect(roundTrip('append', p)).toEqual({ ...p, producer: null, matchSeq: null, writerSeq: null });
  });

  test('results, with and without the duplicate fields', () => {
    const plain: AppendResult = { startSeq: 41, nextSeq: 42, timestamp: 1_700_000_000_123, closed: false };
    expect(replyTrip('append', plain).res).toStrictEqual(plain);
    const dup: AppendResult = { startSeq: -1, nextSeq: -1, timestamp: -1, closed: true, duplicate: true, producerLastSeq: 2 ** 31 - 1 };
    expect(replyTrip('append', dup).res).toStrictEqual(dup);
    expect(replyTrip('trim', { ...plain, closed: true }).res).toStrictEqual({ ...plain, closed: true });
  });

  test('payload bytes: the packed size of records, the body of batches', () => {
    expect(payloadBytes({ kind: 'records', records: [rec('x'.repeat(100), 'kk', [['h', 'vv']])] })).toBe(4 + 12 + 2 + 100 + 8 + 1 + 2);
    expect(payloadBytes({ kind: 'json', body: Buffer.alloc(17) })).toBe(17);
  });
});

describe('the rare operations (JSON fields beside raw bytes)', () => {
  test('create keeps its records as bytes', () => {
    const p: Req<'create'> = { name: '/c', contentType: 'text/plain', ttlSeconds: 60, expiresAtMs: null, closed: false, records: [rec('one', 'k'), rec('two')], schema: null, fork: null };
    expect(roundTrip('create', p)).toEqual(p);
  });

  test('read, head, list, stats, watch requests', () => {
    expect(roundTrip('read', { name: '/r', seq: -1, count: 10, bytes: 1024, format: 'raw', touch: false })).toEqual({ name: '/r', seq: -1, count: 10, bytes: 1024, format: 'raw', touch: false });
    expect(roundTrip('head', { name: '/h', touch: true })).toEqual({ name: '/h', touch: true });
    expect(roundTrip('list', { prefix: '/a', startAfter: '', limit: 5 })).toEqual({ prefix: '/a', startAfter: '', limit: 5 });
    expect(roundTrip('stats', null)).toBeNull();
    expect(roundTrip('watch', { name: '/w' })).toEqual({ name: '/w' });
  });

  const page = (size: number): ReadResult => ({
    body: Buffer.alloc(size, 7),
    count: 3,
    nextSeq: 3,
    tailSeq: 3,
    startSeq: 0,
    upToDate: true,
    closed: false,
    streamId: 5,
    contentType: 'application/octet-stream',
    fork: null,
  });

  test('a small read page is copied into the message', () => {
    const { res, extras } = replyTrip('read', page(100), true);
    expect(extras).toHaveLength(0);
    expect(res).toEqual(page(100));
  });

  test('a large read page from the worker moves beside the message, not copied', () => {
    const p = page(256 * 1024);
    const { res, extras } = replyTrip('read', p, true);
    expect(extras).toEqual([p.body.buffer]);
    expect(res.body.buffer).toBe(p.body.buffer);
    expect(res.body.equals(Buffer.alloc(256 * 1024, 7))).toBe(true);
  });

  test('the gateway never moves a buffer it does not own: a large body is copied', () => {
    const body = Buffer.alloc(256 * 1024, 3);
    const { res, extras } = replyTrip('read', { ...page(0), body }, false);
    expect(extras).toHaveLength(0);
    expect(res.body.buffer).not.toBe(body.buffer);
    expect(res.body.equals(body)).toBe(true);
  });

  test('a head result', () => {
    const info: StreamInfo = {
      name: '/i',
      streamId: 9,
      contentType: 'text/plain',
      startSeq: 0,
      nextSeq: 4,
      closed: false,
      ttlSeconds: null,
      expiresAtMs: null,
      createdAtMs: 1,
      schema: null,
      schemaValidate: false,
      kafkaTopic: null,
      idleTtlSeconds: null,
      lastAccessMs: 2,
      fork: null,
      forkRefs: 0,
      gone: false,
      writerSeq: null,
      durability: 'async',
      durabilityDefault: false,
    };
    expect(replyTrip('head', info).res).toEqual(info);
  });
});

describe('messages', () => {
  test('every operation has its own code, and unknown codes are refused', () => {
    const names: OpName[] = ['create', 'append', 'trim', 'delete', 'read', 'head', 'list', 'stats', 'configure', 'watch', 'unwatch'];
    const codes = names.map((op) => OPS[op].code);
    expect(new Set(codes).size).toBe(names.length);
    for (const op of names) expect(opOf(OPS[op].code)).toBe(op);
    expect(opOf(99)).toBeUndefined();
  });

  test('entries follow one another; a reader that skips a body does not misplace the next', () => {
    const w = new Writer(false);
    const ids = [1, 2, 3];
    for (const id of ids) {
      const m = w.beginEntry(id, OPS.head.code, id);
      OPS.head.req.write(w, { name: `/s${id}` });
      w.endEntry(m);
    }
    const seen: Array<[number, string | null]> = [];
    readEntries(w.take().message, [], (id, _code, _shard, r) => seen.push([id, id === 2 ? null : OPS.head.req.read(r).name]));
    expect(seen).toEqual([
      [1, '/s1'],
      [2, null],
      [3, '/s3'],
    ]);
  });

  test('an entry whose encoding throws is dropped whole; the writer goes on', () => {
    const w = new Writer(false);
    const bad: AppendParams = { name: '/b', origin: 'http', payload: { kind: 'records', records: [] }, contentType: null, close: true, producer: { id: 'p', epoch: 70000, seq: 0 } };
    const m1 = w.beginEntry(1, OPS.append.code, 0);
    expect(() => OPS.append.req.write(w, bad)).toThrow(/out of range/);
    w.rollback(m1);
    expect(w.empty).toBe(true);
    const m2 = w.beginEntry(2, OPS.head.code, 0);
    OPS.head.req.write(w, { name: '/ok' });
    w.endEntry(m2);
    const seen: number[] = [];
    readEntries(w.take().message, [], (id) => seen.push(id));
    expect(seen).toEqual([2]);
  });

  test('a small message is a copy and the writer keeps its buffer; a large one is handed over whole', () => {
    const w = new Writer(false);
    const put = (name: string, bytes: number): void => {
      const m = w.beginEntry(1, OPS.append.code, 0);
      OPS.append.req.write(w, { name, origin: 'http', payload: { kind: 'batches', body: Buffer.alloc(bytes, 1) }, contentType: null, close: false });
      w.endEntry(m);
    };
    put('/small', 10);
    const first = w.take();
    expect(first.transferMessage).toBe(false);
    put('/next', 10);
    const second = w.take();
    const names: string[] = [];
    for (const t of [first, second]) readEntries(t.message, [], (_id, _c, _s, r) => names.push(OPS.append.req.read(r).name));
    expect(names).toEqual(['/small', '/next']);
    put('/large', 100 * 1024);
    const large = w.take();
    expect(large.transferMessage).toBe(true);
    readEntries(large.message, [], (_id, _c, _s, r) => {
      const p = OPS.append.req.read(r);
      expect(p.payload.kind === 'batches' && p.payload.body.length).toBe(100 * 1024);
    });
  });
});
