/**
 * Catch-up reads (`GET /{stream}`), spec/stream-service.md "Read": the json, raw and binary
 * formats, `seq`/`count`/`bytes`, `seq=now`, Svc-Cursor pagination, Svc-Up-To-Date and
 * Svc-Closed on the last page only, ETag/If-None-Match, and parameter validation.
 * Run against both HTTP engines.
 */
import { ENGINES, type JsonRecord, createWith, decodeBinary, expectError, jsonBatch, useNode } from './client';

const TEXT = { 'content-type': 'text/plain' };

describe.each(ENGINES)('read over the %s engine', (engine) => {
  const svc = useNode(engine);

  /** A stream holding `n` text records `r0`, `r1`, … */
  async function streamOf(label: string, n: number, contentType = 'text/plain'): Promise<string> {
    const name = svc.name(label);
    expect((await svc.put(name, { headers: { 'content-type': contentType } })).status).toBe(201);
    if (n > 0) {
      const res = await svc.post(name, jsonBatch(Array.from({ length: n }, (_, i) => ({ body: `r${i}` }))));
      expect(res.status).toBe(200);
    }
    return name;
  }

  describe('formats', () => {
    test('the default format is a JSON array of records with seq, timestamp, key, headers and body', async () => {
      const name = await createWith(svc, svc.name('json'));
      expect((await svc.post(name, { headers: { ...TEXT, 'svc-key': 'k' }, body: 'keyed' })).status).toBe(200);
      expect((await svc.post(name, jsonBatch([{ body: 'with headers', headers: { a: '1', b: '2' } }]))).status).toBe(200);
      const res = await svc.get(name);
      expect(res.status).toBe(200);
      expect(res.header('content-type')).toMatch(/^application\/json\b/);
      const records = res.json<JsonRecord[]>();
      expect(records).toEqual([
        { seq: 0, timestamp: expect.any(Number), key: 'k', body: 'keyed' },
        { seq: 1, timestamp: expect.any(Number), headers: { a: '1', b: '2' }, body: 'with headers' },
      ]);
      for (const r of records) {
        expect(Number.isSafeInteger(r.timestamp)).toBe(true);
        expect(Math.abs(r.timestamp - Date.now())).toBeLessThan(60_000);
      }
      expect((await svc.get(name, { format: 'json' })).text).toBe(res.text);
    });

    test('text with quotes, backslashes, control characters and non-ASCII reads back exactly', async () => {
      const name = await createWith(svc, svc.name('json-escape'));
      const text = 'q"uote \\ back\nnew\ttab \u0001\u001f é ✓ 😀';
      expect((await svc.post(name, { headers: TEXT, body: text })).status).toBe(200);
      const { records } = await svc.read(name);
      expect(records[0]?.body).toBe(text);
    });

    test('a body that is not UTF-8 is returned as body_b64, and a key that is not UTF-8 as key_b64', async () => {
      const name = svc.name('json-b64');
      expect((await svc.put(name)).status).toBe(201);
      const bytes = Buffer.from([0xc3, 0x28, 0xff, 0x00]);
      expect((await svc.post(name, { headers: { 'content-type': 'application/octet-stream' }, body: bytes })).status).toBe(200);
      const key = Buffer.from([0xfe, 0xff]).toString('base64');
      expect((await svc.post(name, jsonBatch([{ body: 'text', key_b64: key }]))).status).toBe(200);
      const { records } = await svc.read(name);
      expect(records).toEqual([
        { seq: 0, timestamp: expect.any(Number), body_b64: bytes.toString('base64') },
        { seq: 1, timestamp: expect.any(Number), key_b64: key, body: 'text' },
      ]);
    });

    test('headers that are not UTF-8 are returned as headers_b64', async () => {
      const name = await createWith(svc, svc.name('json-headers-b64'));
      const hName = Buffer.from('name').toString('base64');
      const hValue = Buffer.from([0xff, 0xfe]).toString('base64');
      expect((await svc.post(name, jsonBatch([{ body: 'b', headers_b64: { [hName]: hValue } }]))).status).toBe(200);
      const { records } = await svc.read(name);
      expect(records).toEqual([{ seq: 0, timestamp: expect.any(Number), headers_b64: { [hName]: hValue }, body: 'b' }]);
    });

    test('format=raw returns the bodies concatenated, with the stream\'s content type', async () => {
      const name = await streamOf('raw', 4, 'application/x-ndjson');
      const res = await svc.get(name, { format: 'raw' });
      expect(res.status).toBe(200);
      expect(res.header('content-type')).toBe('application/x-ndjson');
      expect(res.text).toBe('r0r1r2r3');
      expect(res.header('svc-next-seq')).toBe('4');
      const part = await svc.get(name, { format: 'raw', seq: 1, count: 2 });
      expect(part.text).toBe('r1r2');
      expect(part.header('svc-next-seq')).toBe('3');
    });

    test('format=raw on a stream created with parameters keeps them in the content type', async () => {
      const name = await streamOf('raw-params', 1, 'text/plain; charset=utf-8');
      const res = await svc.get(name, { format: 'raw' });
      expect(res.header('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.text).toBe('r0');
    });

    test('format=binary returns record batches whose offsets are the stream\'s seqs', async () => {
      const name = await streamOf('binary', 5);
      const res = await svc.get(name, { format: 'binary', seq: 1, count: 3 });
      expect(res.status).toBe(200);
      expect(res.header('content-type')).toBe('application/vnd.svc.batch');
      expect(res.header('svc-next-seq')).toBe('4');
      const records = decodeBinary(res.body);
      expect(records.map((r) => [r.offset, r.value?.toString()])).toEqual([[1, 'r1'], [2, 'r2'], [3, 'r3']]);
      const { records: json } = await svc.read(name, { seq: 1, count: 3 });
      expect(records.map((r) => r.timestamp)).toEqual(json.map((r) => r.timestamp));
    });

    test('format=binary of an empty range is an empty body', async () => {
      const name = await streamOf('binary-empty', 2);
      const res = await svc.get(name, { format: 'binary', seq: 2 });
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(0);
      expect(res.header('svc-up-to-date')).toBe('true');
    });

    test('an unknown format answers 400', async () => {
      const name = await streamOf('bad-format', 1);
      expectError(await svc.get(name, { format: 'xml' }), 400);
      expectError(await svc.get(name, { format: 'JSON' }), 400);
    });
  });

  describe('positions and budgets', () => {
    test('seq starts the read at that record', async () => {
      const name = await streamOf('seq', 5);
      const { res, records } = await svc.read(name, { seq: 3 });
      expect(records.map((r) => r.seq)).toEqual([3, 4]);
      expect(res.header('svc-next-seq')).toBe('5');
    });

    test('count caps the number of records and Svc-Next-Seq is the resume position', async () => {
      const name = await streamOf('count', 5);
      const { res, records } = await svc.read(name, { seq: 1, count: 2 });
      expect(records.map((r) => r.seq)).toEqual([1, 2]);
      expect(res.header('svc-next-seq')).toBe('3');
      expect(res.header('svc-up-to-date')).toBeUndefined();
      const next = await svc.read(name, { seq: 3, count: 2 });
      expect(next.records.map((r) => r.seq)).toEqual([3, 4]);
      expect(next.res.header('svc-up-to-date')).toBe('true');
    });

    test('count=0 returns no records and resumes where it started', async () => {
      const name = await streamOf('count-zero', 3);
      const { res, records } = await svc.read(name, { seq: 1, count: 0 });
      expect(records).toEqual([]);
      expect(res.header('svc-next-seq')).toBe('1');
      expect(res.header('svc-up-to-date')).toBeUndefined();
    });

    test('bytes caps the body bytes of a page', async () => {
      const name = await createWith(svc, svc.name('bytes'), ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc', 'dddddddddd']);
      const { res, records } = await svc.read(name, { bytes: 25 });
      expect(records.map((r) => r.body)).toEqual(['aaaaaaaaaa', 'bbbbbbbbbb']);
      expect(res.header('svc-next-seq')).toBe('2');
      expect(res.header('svc-up-to-date')).toBeUndefined();
      const raw = await svc.get(name, { format: 'raw', bytes: 30 });
      expect(raw.text).toBe('aaaaaaaaaabbbbbbbbbbcccccccccc');
    });

    test('a page holds at least one record even when that record is larger than bytes', async () => {
      const name = await createWith(svc, svc.name('bytes-min'), ['x'.repeat(100), 'y']);
      for (const bytes of [1, 0]) {
        const { res, records } = await svc.read(name, { bytes });
        expect(records.map((r) => r.body)).toEqual(['x'.repeat(100)]);
        expect(res.header('svc-next-seq')).toBe('1');
      }
      const bin = await svc.get(name, { format: 'binary', bytes: 1 });
      expect(decodeBinary(bin.body).map((r) => r.offset)).toEqual([0]);
    });

    test('seq=now returns an empty array with Svc-Next-Seq at the tail and Svc-Up-To-Date', async () => {
      const name = await streamOf('now', 3);
      const { res, records } = await svc.read(name, { seq: 'now' });
      expect(records).toEqual([]);
      expect(res.header('svc-next-seq')).toBe('3');
      expect(res.header('svc-up-to-date')).toBe('true');
      const empty = await streamOf('now-empty', 0);
      const e = await svc.read(empty, { seq: 'now' });
      expect(e.records).toEqual([]);
      expect(e.res.header('svc-next-seq')).toBe('0');
      expect(e.res.header('svc-up-to-date')).toBe('true');
    });

    test('a read at the tail returns an empty array with Svc-Up-To-Date', async () => {
      const name = await streamOf('at-tail', 2);
      const { res, records } = await svc.read(name, { seq: 2 });
      expect(records).toEqual([]);
      expect(res.header('svc-next-seq')).toBe('2');
      expect(res.header('svc-up-to-date')).toBe('true');
    });

    test('a seq beyond the tail answers 400 with next_seq', async () => {
      const name = await streamOf('beyond', 2);
      const body = expectError(await svc.get(name, { seq: 3 }), 400);
      expect(body.next_seq).toBe(2);
    });

    test('an empty stream reads as an empty array with Svc-Up-To-Date', async () => {
      const name = await streamOf('empty', 0);
      const { res, records } = await svc.read(name);
      expect(records).toEqual([]);
      expect(res.header('svc-next-seq')).toBe('0');
      expect(res.header('svc-up-to-date')).toBe('true');
    });
  });

  describe('pagination and end of stream', () => {
    test('following Svc-Cursor until Svc-Up-To-Date returns every record exactly once', async () => {
      const name = await streamOf('cursor', 23);
      const seen: number[] = [];
      let page = await svc.get(name, { count: 5 });
      for (let pages = 1; ; pages++) {
        expect(page.status).toBe(200);
        seen.push(...page.json<JsonRecord[]>().map((r) => r.seq));
        if (page.header('svc-up-to-date') === 'true') break;
        expect(pages).toBeLessThan(10);
        const cursor = page.header('svc-cursor');
        expect(cursor).toEqual(expect.any(String));
        page = await svc.get(name, { cursor: cursor!, count: 5 });
      }
      expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i));
    });

    test('following Svc-Next-Seq as the next seq also returns every record exactly once', async () => {
      const name = await streamOf('next-seq-pages', 12);
      const seen: string[] = [];
      let seq = 0;
      for (;;) {
        const { res, records } = await svc.read(name, { seq, count: 5 });
        seen.push(...records.map((r) => r.body!));
        seq = Number(res.header('svc-next-seq'));
        if (res.header('svc-up-to-date') === 'true') break;
      }
      expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `r${i}`));
      expect(seq).toBe(12);
    });

    test('Svc-Up-To-Date appears only on the page that reaches the tail', async () => {
      const name = await streamOf('up-to-date', 4);
      const first = await svc.get(name, { count: 2 });
      expect(first.header('svc-up-to-date')).toBeUndefined();
      const last = await svc.get(name, { seq: 2, count: 2 });
      expect(last.header('svc-up-to-date')).toBe('true');
      const whole = await svc.get(name);
      expect(whole.header('svc-up-to-date')).toBe('true');
    });

    test('a cursor from a stream that was deleted and created again answers 409 conflict', async () => {
      const name = await streamOf('cursor-recreated', 4);
      const page = await svc.get(name, { count: 2 });
      const cursor = page.header('svc-cursor');
      expect(cursor).toEqual(expect.any(String));
      expect((await svc.del(name)).status).toBe(204);
      expect((await svc.put(name, { headers: TEXT })).status).toBe(201);
      expect((await svc.post(name, jsonBatch([{ body: 'a' }, { body: 'b' }, { body: 'c' }]))).status).toBe(200);
      expectError(await svc.get(name, { cursor: cursor! }), 409, 'conflict');
    });

    test('a cursor the server did not issue answers 400', async () => {
      const name = await streamOf('cursor-bogus', 2);
      expectError(await svc.get(name, { cursor: 'not-a-cursor' }), 400);
    });

    test('seq and cursor together answer 400', async () => {
      const name = await streamOf('cursor-and-seq', 4);
      const cursor = (await svc.get(name, { count: 2 })).header('svc-cursor')!;
      expectError(await svc.get(name, { cursor, seq: 0 }), 400);
    });

    test('Svc-Closed: true appears only when the stream is sealed and the read reaches its end', async () => {
      const name = await streamOf('closed-pages', 4);
      const open = await svc.get(name);
      expect(open.header('svc-closed')).toBeUndefined();
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const first = await svc.get(name, { count: 2 });
      expect(first.header('svc-closed')).toBeUndefined();
      expect(first.header('svc-up-to-date')).toBeUndefined();
      const last = await svc.get(name, { seq: 2 });
      expect(last.header('svc-closed')).toBe('true');
      expect(last.header('svc-up-to-date')).toBe('true');
      expect(last.json<JsonRecord[]>().map((r) => r.seq)).toEqual([2, 3]);
      const end = await svc.get(name, { seq: 4 });
      expect(end.json()).toEqual([]);
      expect(end.header('svc-closed')).toBe('true');
    });
  });

  describe('ETag', () => {
    test('a catch-up read carries an ETag, and If-None-Match with it answers 304 without a body', async () => {
      const name = await streamOf('etag', 3);
      const res = await svc.get(name);
      const etag = res.header('etag');
      expect(etag).toEqual(expect.any(String));
      const again = await svc.get(name, undefined, { 'if-none-match': etag! });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.header('etag')).toBe(etag);
    });

    test('an append changes the ETag of a read that reaches the tail', async () => {
      const name = await streamOf('etag-append', 2);
      const before = await svc.get(name);
      const etag = before.header('etag')!;
      expect((await svc.post(name, { headers: TEXT, body: 'new' })).status).toBe(200);
      const after = await svc.get(name, undefined, { 'if-none-match': etag });
      expect(after.status).toBe(200);
      expect(after.header('etag')).toEqual(expect.any(String));
      expect(after.header('etag')).not.toBe(etag);
      expect(after.json<JsonRecord[]>().map((r) => r.body)).toEqual(['r0', 'r1', 'new']);
    });

    test('sealing changes the ETag of a read that reaches the tail', async () => {
      const name = await streamOf('etag-seal', 2);
      const etag = (await svc.get(name)).header('etag')!;
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const after = await svc.get(name, undefined, { 'if-none-match': etag });
      expect(after.status).toBe(200);
      expect(after.header('svc-closed')).toBe('true');
    });

    test('the ETag differs between formats of the same range', async () => {
      const name = await streamOf('etag-format', 2);
      const json = (await svc.get(name)).header('etag')!;
      const raw = await svc.get(name, { format: 'raw' }, { 'if-none-match': json });
      expect(raw.status).toBe(200);
      expect(raw.header('etag')).not.toBe(json);
    });
  });

  describe('validation', () => {
    test.each([
      ['count', '-1'],
      ['count', 'x'],
      ['count', '1e3'],
      ['count', '1.5'],
      ['bytes', '-1'],
      ['bytes', 'x'],
      ['bytes', '1e3'],
      ['seq', '-1'],
      ['seq', 'x'],
      ['seq', '1e3'],
      ['seq', ''],
    ])('%s=%j answers 400', async (param, value) => {
      const name = await streamOf('invalid-param', 2);
      expectError(await svc.get(name, `${param}=${encodeURIComponent(value)}`), 400);
    });

    test('an unknown query parameter answers 400', async () => {
      const name = await streamOf('unknown-param', 1);
      expectError(await svc.get(name, { offset: 0 }), 400);
    });

    test('a repeated query parameter answers 400', async () => {
      const name = await streamOf('repeated-param', 3);
      expectError(await svc.get(name, 'seq=0&seq=1'), 400);
      expectError(await svc.get(name, 'count=1&count=1'), 400);
    });

    test('a read of an absent stream answers 404 with a JSON error', async () => {
      expectError(await svc.get(svc.name('absent')), 404);
    });
  });
});
