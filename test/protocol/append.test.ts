/**
 * Append, seal and trim (`POST /{stream}`), spec/stream-service.md "Append or trim" and the
 * stream state table: open → sealed with Svc-Closed (records first), sealed refuses appends
 * with 409, Svc-Trim-Seq drops records below it on open and sealed streams alike.
 * Run against both HTTP engines.
 */
import {
  BINARY_BATCH,
  ENGINES,
  type Res,
  binaryBatch,
  createWith,
  decodeBinary,
  expectError,
  jsonBatch,
  useNode,
} from './client';

const TEXT = { 'content-type': 'text/plain' };

describe.each(ENGINES)('append over the %s engine', (engine) => {
  const svc = useNode(engine);

  const seqs = (res: Res) => ({ start: Number(res.header('svc-start-seq')), next: Number(res.header('svc-next-seq')) });

  describe('single records', () => {
    test('an append answers 200 with Svc-Start-Seq, Svc-Next-Seq and a unix-millisecond Svc-Timestamp', async () => {
      const name = await createWith(svc, svc.name('single'));
      const before = Date.now();
      const first = await svc.post(name, { headers: TEXT, body: 'one' });
      const after = Date.now();
      expect(first.status).toBe(200);
      expect(first.header('svc-start-seq')).toBe('0');
      expect(first.header('svc-next-seq')).toBe('1');
      const ts = first.header('svc-timestamp');
      expect(ts).toMatch(/^\d+$/);
      expect(Number(ts)).toBeGreaterThanOrEqual(before - 2000);
      expect(Number(ts)).toBeLessThanOrEqual(after + 2000);
      expect(first.header('svc-closed')).toBeUndefined();

      const second = await svc.post(name, { headers: TEXT, body: 'two' });
      expect(seqs(second)).toEqual({ start: 1, next: 2 });
      expect(Number(second.header('svc-timestamp'))).toBeGreaterThanOrEqual(Number(ts));
    });

    test('the record reads back with the timestamp the append reported', async () => {
      const name = await createWith(svc, svc.name('single-ts'));
      const res = await svc.post(name, { headers: TEXT, body: 'hello' });
      const { records } = await svc.read(name);
      expect(records).toEqual([{ seq: 0, timestamp: Number(res.header('svc-timestamp')), body: 'hello' }]);
    });

    test('Svc-Key becomes the record key', async () => {
      const name = await createWith(svc, svc.name('key'));
      expect((await svc.post(name, { headers: { ...TEXT, 'svc-key': 'user-42' }, body: 'keyed' })).status).toBe(200);
      expect((await svc.post(name, { headers: TEXT, body: 'unkeyed' })).status).toBe(200);
      const { records } = await svc.read(name);
      expect(records[0]).toMatchObject({ seq: 0, key: 'user-42', body: 'keyed' });
      expect(records[1]).not.toHaveProperty('key');
      expect(records[1]).toMatchObject({ seq: 1, body: 'unkeyed' });
    });

    test('a content type differing only in case and parameters is accepted', async () => {
      const name = await createWith(svc, svc.name('type-params'));
      const res = await svc.post(name, { headers: { 'content-type': 'TEXT/plain; charset=utf-8' }, body: 'ok' });
      expect(res.status).toBe(200);
    });

    test('a single record whose content type differs from the stream\'s answers 409 conflict and writes nothing', async () => {
      const name = await createWith(svc, svc.name('type-mismatch'), ['x']);
      expectError(await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{}' }), 409, 'conflict');
      expect(await svc.nextSeq(name)).toBe(1);
    });

    test('an empty body without Svc-Closed answers 400 and writes nothing', async () => {
      const name = await createWith(svc, svc.name('empty'));
      expectError(await svc.post(name, { headers: TEXT }), 400);
      expectError(await svc.post(name, { headers: TEXT, body: '' }), 400);
      expect(await svc.nextSeq(name)).toBe(0);
    });

    test('an append to an absent stream answers 404 with a JSON error', async () => {
      expectError(await svc.post(svc.name('absent'), { headers: TEXT, body: 'x' }), 404);
    });

    test('binary bodies are stored byte for byte', async () => {
      const name = svc.name('binary-body');
      expect((await svc.put(name)).status).toBe(201);
      const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0x22, 0x5c]);
      expect((await svc.post(name, { headers: { 'content-type': 'application/octet-stream' }, body: bytes })).status).toBe(200);
      const raw = await svc.get(name, { format: 'raw' });
      expect(raw.body.equals(bytes)).toBe(true);
    });
  });

  describe('JSON batches', () => {
    test('a JSON batch appends every record with its body, key and headers', async () => {
      const name = await createWith(svc, svc.name('json-batch'), ['before']);
      const res = await svc.post(
        name,
        jsonBatch([
          { body: 'a' },
          { body: 'b', key: 'k-b' },
          { body: 'c', headers: { trace: 't-1', 'x-empty': '' } },
          { body: '', key: 'k-d', headers: { 'h é': 'ü "quoted" \\ \n' } },
        ]),
      );
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 1, next: 5 });
      expect(res.header('svc-timestamp')).toMatch(/^\d+$/);
      const { records } = await svc.read(name, { seq: 1 });
      expect(records.map(({ timestamp: _timestamp, ...r }) => r)).toEqual([
        { seq: 1, body: 'a' },
        { seq: 2, key: 'k-b', body: 'b' },
        { seq: 3, headers: { trace: 't-1', 'x-empty': '' }, body: 'c' },
        { seq: 4, key: 'k-d', headers: { 'h é': 'ü "quoted" \\ \n' }, body: '' },
      ]);
    });

    test('binary-safe body_b64, key_b64 and headers_b64 read back identically', async () => {
      const name = await createWith(svc, svc.name('json-b64'), [], 'application/octet-stream');
      const body = Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x80]).toString('base64');
      const key = Buffer.from([0xfe, 0x01]).toString('base64');
      const hName = Buffer.from([0x80, 0x61]).toString('base64');
      const hValue = Buffer.from([0xc0, 0xaf]).toString('base64');
      const res = await svc.post(name, jsonBatch([{ body_b64: body, key_b64: key, headers_b64: { [hName]: hValue } }]));
      expect(res.status).toBe(200);
      const { records } = await svc.read(name);
      expect(records).toEqual([{ seq: 0, timestamp: expect.any(Number), key_b64: key, headers_b64: { [hName]: hValue }, body_b64: body }]);
      const raw = await svc.get(name, { format: 'raw' });
      expect(raw.body.equals(Buffer.from(body, 'base64'))).toBe(true);
    });

    test('base64 fields holding valid UTF-8 read back as text fields', async () => {
      const name = await createWith(svc, svc.name('json-b64-utf8'), [], 'application/octet-stream');
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      const res = await svc.post(name, jsonBatch([{ body_b64: b64('héllo'), key_b64: b64('kéy'), headers_b64: { [b64('n')]: b64('v') } }]));
      expect(res.status).toBe(200);
      const { records } = await svc.read(name);
      expect(records).toEqual([{ seq: 0, timestamp: expect.any(Number), key: 'kéy', headers: { n: 'v' }, body: 'héllo' }]);
    });

    test('a JSON batch works on a stream of any content type', async () => {
      const name = await createWith(svc, svc.name('json-any-type'), [], 'application/x-custom');
      const res = await svc.post(name, jsonBatch([{ body: 'x' }, { body: 'y' }]));
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 0, next: 2 });
    });

    test('Svc-Key with a JSON batch answers 400 and writes nothing, since batches carry keys inline', async () => {
      const name = await createWith(svc, svc.name('json-key-header'));
      const batch = jsonBatch([{ body: 'x' }]);
      expectError(await svc.post(name, { ...batch, headers: { ...batch.headers, 'svc-key': 'k' } }), 400);
      expect(await svc.nextSeq(name)).toBe(0);
    });
  });

  describe('binary batches', () => {
    test('a binary batch appends its records with keys and headers, readable as JSON', async () => {
      const name = await createWith(svc, svc.name('bin-batch'), ['first', 'second']);
      const batch = binaryBatch([
        { key: Buffer.from('k1'), value: Buffer.from('v1'), headers: [[Buffer.from('h'), Buffer.from('1')]] },
        { key: null, value: Buffer.from('v2'), headers: null },
        { key: Buffer.from([0xff]), value: Buffer.from([0x00, 0xfe]), headers: [[Buffer.from('bin'), Buffer.from([0x80])]] },
      ]);
      const res = await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body: batch });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 2, next: 5 });
      const { records } = await svc.read(name, { seq: 2 });
      expect(records.map(({ timestamp: _timestamp, ...r }) => r)).toEqual([
        { seq: 2, key: 'k1', headers: { h: '1' }, body: 'v1' },
        { seq: 3, body: 'v2' },
        { seq: 4, key_b64: '/w==', headers_b64: { [Buffer.from('bin').toString('base64')]: 'gA==' }, body_b64: 'AP4=' },
      ]);
    });

    test('a binary batch reads back through format=binary with offsets rewritten to the stream\'s seqs', async () => {
      const name = await createWith(svc, svc.name('bin-roundtrip'), ['a', 'b', 'c']);
      const batch = binaryBatch([
        { key: Buffer.from('x'), value: Buffer.from('one'), headers: [[Buffer.from('h'), Buffer.from('v')]] },
        { key: null, value: Buffer.from('two'), headers: null },
      ]);
      expect((await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body: batch })).status).toBe(200);
      const res = await svc.get(name, { seq: 3, format: 'binary' });
      expect(res.status).toBe(200);
      expect(res.header('content-type')).toBe(BINARY_BATCH);
      const records = decodeBinary(res.body);
      expect(records.map((r) => ({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString(), headers: r.headers.map(([k, v]) => [k.toString(), v?.toString()]) }))).toEqual([
        { offset: 3, key: 'x', value: 'one', headers: [['h', 'v']] },
        { offset: 4, key: null, value: 'two', headers: [] },
      ]);
    });

    test('several concatenated binary batches are appended in order with consecutive seqs', async () => {
      const name = await createWith(svc, svc.name('bin-multi'), ['zero']);
      const body = Buffer.concat([
        binaryBatch([{ key: null, value: Buffer.from('b1-0'), headers: null }, { key: null, value: Buffer.from('b1-1'), headers: null }]),
        binaryBatch([{ key: null, value: Buffer.from('b2-0'), headers: null }]),
      ]);
      const res = await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 1, next: 4 });
      const { records } = await svc.read(name);
      expect(records.map((r) => [r.seq, r.body])).toEqual([[0, 'zero'], [1, 'b1-0'], [2, 'b1-1'], [3, 'b2-0']]);
      const bin = decodeBinary((await svc.get(name, { format: 'binary' })).body);
      expect(bin.map((r) => [r.offset, r.value?.toString()])).toEqual([[0, 'zero'], [1, 'b1-0'], [2, 'b1-1'], [3, 'b2-0']]);
    });

    test('a binary batch whose CRC does not match answers 400 and writes nothing', async () => {
      const name = await createWith(svc, svc.name('bin-corrupt'), ['x']);
      const batch = binaryBatch([{ key: null, value: Buffer.from('payload'), headers: null }]);
      batch.writeUInt8(batch.readUInt8(batch.length - 3) ^ 0x01, batch.length - 3); // inside the record: covered by the CRC
      expectError(await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body: batch }), 400);
      expect(await svc.nextSeq(name)).toBe(1);
    });

    test('a valid batch followed by a corrupt one is refused whole', async () => {
      const name = await createWith(svc, svc.name('bin-half-corrupt'));
      const bad = binaryBatch([{ key: null, value: Buffer.from('bad'), headers: null }]);
      bad.writeUInt8(bad.readUInt8(bad.length - 2) ^ 0xff, bad.length - 2);
      const body = Buffer.concat([binaryBatch([{ key: null, value: Buffer.from('good'), headers: null }]), bad]);
      expectError(await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body }), 400);
      expect(await svc.nextSeq(name)).toBe(0);
    });

    test('bytes that are not a record batch answer 400 and write nothing', async () => {
      const name = await createWith(svc, svc.name('bin-garbage'));
      expectError(await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body: Buffer.from('definitely not a batch') }), 400);
      expect(await svc.nextSeq(name)).toBe(0);
    });
  });

  describe('sealing', () => {
    test('Svc-Closed: true on an append stores the records first, then seals the stream', async () => {
      const name = await createWith(svc, svc.name('seal-append'), ['a']);
      const res = await svc.post(name, { headers: { ...TEXT, 'svc-closed': 'true' }, body: 'last' });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 1, next: 2 });
      expect(res.header('svc-closed')).toBe('true');
      const { res: read, records } = await svc.read(name);
      expect(records.map((r) => r.body)).toEqual(['a', 'last']);
      expect(read.header('svc-closed')).toBe('true');
      expect((await svc.head(name)).header('svc-closed')).toBe('true');
    });

    test('Svc-Closed: true on a JSON batch appends the whole batch before sealing', async () => {
      const name = await createWith(svc, svc.name('seal-batch'));
      const batch = jsonBatch([{ body: '1' }, { body: '2' }]);
      const res = await svc.post(name, { ...batch, headers: { ...batch.headers, 'svc-closed': 'true' } });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 0, next: 2 });
      expect(res.header('svc-closed')).toBe('true');
      expect((await svc.head(name)).header('svc-closed')).toBe('true');
    });

    test('Svc-Closed: false on an append leaves the stream open', async () => {
      const name = await createWith(svc, svc.name('seal-false'));
      const res = await svc.post(name, { headers: { ...TEXT, 'svc-closed': 'false' }, body: 'x' });
      expect(res.status).toBe(200);
      expect(res.header('svc-closed')).toBeUndefined();
      expect((await svc.head(name)).header('svc-closed')).toBe('false');
    });

    test('a sealed stream refuses single-record, JSON-batch and binary-batch appends with 409 conflict', async () => {
      const name = await createWith(svc, svc.name('sealed-refuses'), ['a']);
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      expectError(await svc.post(name, { headers: TEXT, body: 'b' }), 409, 'conflict');
      expectError(await svc.post(name, jsonBatch([{ body: 'c' }])), 409, 'conflict');
      const bin = binaryBatch([{ key: null, value: Buffer.from('d'), headers: null }]);
      expectError(await svc.post(name, { headers: { 'content-type': BINARY_BATCH }, body: bin }), 409, 'conflict');
      expectError(await svc.post(name, { headers: { ...TEXT, 'svc-closed': 'true' }, body: 'e' }), 409, 'conflict');
      expect(await svc.nextSeq(name)).toBe(1);
    });

    test('an empty body with Svc-Closed: true seals without appending, and sealing again is idempotent', async () => {
      const name = await createWith(svc, svc.name('seal-only'), ['a', 'b']);
      const first = await svc.post(name, { headers: { 'svc-closed': 'true' } });
      expect(first.status).toBe(200);
      expect(first.header('svc-closed')).toBe('true');
      expect(first.header('svc-next-seq')).toBe('2');
      const again = await svc.post(name, { headers: { 'svc-closed': 'true' } });
      expect(again.status).toBe(200);
      expect(again.header('svc-closed')).toBe('true');
      expect(again.header('svc-next-seq')).toBe('2');
      const head = await svc.head(name);
      expect(head.header('svc-closed')).toBe('true');
      expect(head.header('svc-next-seq')).toBe('2');
    });

    test('an invalid Svc-Closed value on an append answers 400 and writes nothing', async () => {
      const name = await createWith(svc, svc.name('seal-invalid'));
      expectError(await svc.post(name, { headers: { ...TEXT, 'svc-closed': 'yes' }, body: 'x' }), 400);
      expect(await svc.nextSeq(name)).toBe(0);
      expect((await svc.head(name)).header('svc-closed')).toBe('false');
    });
  });

  describe('concurrency', () => {
    test('200 concurrent appends from several clients get distinct, gap-free seq ranges, all readable in seq order', async () => {
      const name = await createWith(svc, svc.name('concurrent'));
      // Every fifth request is a JSON batch of three records, the rest single records.
      const requests = Array.from({ length: 200 }, (_, i) =>
        i % 5 === 0
          ? { bodies: [`r${i}.0`, `r${i}.1`, `r${i}.2`], init: jsonBatch([{ body: `r${i}.0` }, { body: `r${i}.1` }, { body: `r${i}.2` }]) }
          : { bodies: [`r${i}`], init: { headers: TEXT, body: `r${i}` } },
      );
      const responses = await Promise.all(requests.map((r) => svc.post(name, r.init)));
      const expected: string[] = [];
      const ranges = responses.map((res, i) => {
        expect(res.status).toBe(200);
        const { start, next } = seqs(res);
        expect(next - start).toBe(requests[i]!.bodies.length);
        return { start, next, bodies: requests[i]!.bodies };
      });
      ranges.sort((a, b) => a.start - b.start);
      let at = 0;
      for (const r of ranges) {
        expect(r.start).toBe(at);
        at = r.next;
        expected.push(...r.bodies);
      }
      expect(at).toBe(280);
      const { res, records } = await svc.read(name, { count: 1000 });
      expect(res.header('svc-next-seq')).toBe('280');
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 280 }, (_, i) => i));
      expect(records.map((r) => r.body)).toEqual(expected);
    });
  });

  describe('trim', () => {
    test('Svc-Trim-Seq drops the records below it and reports the new start', async () => {
      const name = await createWith(svc, svc.name('trim'), ['0', '1', '2', '3', '4']);
      const res = await svc.post(name, { headers: { 'svc-trim-seq': '3' } });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 3, next: 5 });
      const { res: read, records } = await svc.read(name, { seq: 0 });
      expect(records.map((r) => [r.seq, r.body])).toEqual([[3, '3'], [4, '4']]);
      expect(read.header('svc-start-seq')).toBe('3');
      const head = await svc.head(name);
      expect(head.header('svc-start-seq')).toBe('3');
      expect(head.header('svc-next-seq')).toBe('5');
      const list = (await svc.list({ prefix: name })).json<{ streams: Array<{ start_seq: number }> }>();
      expect(list.streams[0]?.start_seq).toBe(3);
    });

    test('a trim inside a batch keeps the records of that batch from the trim point on', async () => {
      const name = await createWith(svc, svc.name('trim-mid-batch'));
      expect((await svc.post(name, jsonBatch([{ body: 'a' }, { body: 'b' }, { body: 'c' }, { body: 'd' }]))).status).toBe(200);
      expect(seqs(await svc.post(name, { headers: { 'svc-trim-seq': '2' } }))).toEqual({ start: 2, next: 4 });
      const { records } = await svc.read(name);
      expect(records.map((r) => [r.seq, r.body])).toEqual([[2, 'c'], [3, 'd']]);
      const bin = decodeBinary((await svc.get(name, { format: 'binary' })).body);
      expect(bin.map((r) => [r.offset, r.value?.toString()])).toEqual([[2, 'c'], [3, 'd']]);
      expect((await svc.get(name, { format: 'raw' })).text).toBe('cd');
    });

    test('a trim to the tail drops every record and appends continue at the tail', async () => {
      const name = await createWith(svc, svc.name('trim-all'), ['a', 'b']);
      expect(seqs(await svc.post(name, { headers: { 'svc-trim-seq': '2' } }))).toEqual({ start: 2, next: 2 });
      const { res, records } = await svc.read(name);
      expect(records).toEqual([]);
      expect(res.header('svc-up-to-date')).toBe('true');
      expect(seqs(await svc.post(name, { headers: TEXT, body: 'c' }))).toEqual({ start: 2, next: 3 });
      expect((await svc.read(name)).records.map((r) => [r.seq, r.body])).toEqual([[2, 'c']]);
    });

    test('a trim below the current start changes nothing', async () => {
      const name = await createWith(svc, svc.name('trim-backwards'), ['a', 'b', 'c']);
      expect(seqs(await svc.post(name, { headers: { 'svc-trim-seq': '2' } })).start).toBe(2);
      const res = await svc.post(name, { headers: { 'svc-trim-seq': '1' } });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 2, next: 3 });
      expect((await svc.head(name)).header('svc-start-seq')).toBe('2');
    });

    test('a trim beyond the tail answers 400 with next_seq and trims nothing', async () => {
      const name = await createWith(svc, svc.name('trim-beyond'), ['a', 'b']);
      const body = expectError(await svc.post(name, { headers: { 'svc-trim-seq': '3' } }), 400);
      expect(body.next_seq).toBe(2);
      expect((await svc.head(name)).header('svc-start-seq')).toBe('0');
    });

    test('a trim works on a sealed stream and leaves it sealed', async () => {
      const name = await createWith(svc, svc.name('trim-sealed'), ['a', 'b', 'c']);
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const res = await svc.post(name, { headers: { 'svc-trim-seq': '2' } });
      expect(res.status).toBe(200);
      expect(seqs(res)).toEqual({ start: 2, next: 3 });
      const head = await svc.head(name);
      expect(head.header('svc-start-seq')).toBe('2');
      expect(head.header('svc-closed')).toBe('true');
      const { res: read, records } = await svc.read(name);
      expect(records.map((r) => r.body)).toEqual(['c']);
      expect(read.header('svc-closed')).toBe('true');
    });

    test('a trim with a body answers 400 and neither trims nor appends', async () => {
      const name = await createWith(svc, svc.name('trim-body'), ['a', 'b']);
      expectError(await svc.post(name, { headers: { ...TEXT, 'svc-trim-seq': '1' }, body: 'c' }), 400);
      const head = await svc.head(name);
      expect(head.header('svc-start-seq')).toBe('0');
      expect(head.header('svc-next-seq')).toBe('2');
    });

    test.each(['-1', 'x', '1.5', '1e3'])('Svc-Trim-Seq %j answers 400 and trims nothing', async (value) => {
      const name = await createWith(svc, svc.name('trim-invalid'), ['a', 'b']);
      expectError(await svc.post(name, { headers: { 'svc-trim-seq': value } }), 400);
      expect((await svc.head(name)).header('svc-start-seq')).toBe('0');
    });

    test('a trim on an absent stream answers 404', async () => {
      expectError(await svc.post(svc.name('trim-absent'), { headers: { 'svc-trim-seq': '0' } }), 404);
    });
  });
});
