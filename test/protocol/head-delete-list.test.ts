/**
 * Inspect (`HEAD /{stream}`), delete (`DELETE /{stream}`), list (`GET /`) and stream names,
 * spec/stream-service.md "Inspect", "Delete", "List", "Stream metadata" and "What the
 * service does" (the whole path is the name). Run against both HTTP engines.
 */
import { ENGINES, type ListEntry, type ListPage, createWith, expectError, jsonBatch, useNode } from './client';

const TEXT = { 'content-type': 'text/plain' };

describe.each(ENGINES)('head, delete and list over the %s engine', (engine) => {
  const svc = useNode(engine);

  async function list(query: Record<string, string | number>): Promise<ListPage> {
    const res = await svc.list(query);
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toMatch(/^application\/json\b/);
    return res.json<ListPage>();
  }

  describe('HEAD', () => {
    test('HEAD reports every metadata header and no body', async () => {
      const name = svc.name('head');
      const created = await svc.put(name, {
        headers: { 'content-type': 'application/x-ndjson', 'svc-ttl': '86400', 'svc-expires-at': '2045-06-07T08:09:10Z' },
      });
      expect(created.status).toBe(201);
      expect((await svc.post(name, jsonBatch([{ body: 'a' }, { body: 'b' }, { body: 'c' }]))).status).toBe(200);
      expect((await svc.post(name, { headers: { 'svc-trim-seq': '1' } })).status).toBe(200);
      const res = await svc.head(name);
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(0);
      expect(res.header('content-type')).toBe('application/x-ndjson');
      expect(res.header('svc-next-seq')).toBe('3');
      expect(res.header('svc-start-seq')).toBe('1');
      expect(res.header('svc-ttl')).toBe('86400');
      expect(res.header('svc-expires-at')).toBe('2045-06-07T08:09:10.000Z');
      expect(res.header('svc-closed')).toBe('false');
    });

    test('HEAD on a sealed stream reports Svc-Closed: true', async () => {
      const name = await createWith(svc, svc.name('head-sealed'), ['x']);
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const res = await svc.head(name);
      expect(res.header('svc-closed')).toBe('true');
      expect(res.header('svc-next-seq')).toBe('1');
    });

    test('HEAD on an absent stream answers 404 without a body', async () => {
      const res = await svc.head(svc.name('head-absent'));
      expect(res.status).toBe(404);
      expect(res.body.length).toBe(0);
    });
  });

  describe('DELETE', () => {
    test('DELETE answers 204 without a body, and the stream is gone afterwards', async () => {
      const name = await createWith(svc, svc.name('delete'), ['a', 'b']);
      const res = await svc.del(name);
      expect(res.status).toBe(204);
      expect(res.body.length).toBe(0);
      expect((await svc.head(name)).status).toBe(404);
      expectError(await svc.get(name), 404);
      expectError(await svc.post(name, { headers: TEXT, body: 'c' }), 404);
      expectError(await svc.del(name), 404);
      expect((await list({ prefix: name })).streams).toEqual([]);
    });

    test('DELETE of an absent stream answers 404 with a JSON error', async () => {
      expectError(await svc.del(svc.name('delete-absent')), 404);
    });

    test('a deleted name is reusable at once: the new stream starts at seq 0 without the old records', async () => {
      const name = await createWith(svc, svc.name('reuse'), ['old-0', 'old-1', 'old-2']);
      expect((await svc.del(name)).status).toBe(204);
      const created = await svc.put(name, { headers: { 'content-type': 'application/json' } });
      expect(created.status).toBe(201);
      expect(created.header('svc-next-seq')).toBe('0');
      const head = await svc.head(name);
      expect(head.header('content-type')).toBe('application/json');
      expect(head.header('svc-start-seq')).toBe('0');
      expect(head.header('svc-next-seq')).toBe('0');
      expect((await svc.read(name)).records).toEqual([]);
      const appended = await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{"new":true}' });
      expect(appended.header('svc-start-seq')).toBe('0');
      expect((await svc.read(name)).records.map((r) => [r.seq, r.body])).toEqual([[0, '{"new":true}']]);
    });

    test('a sealed stream can be deleted and its name created again open', async () => {
      const name = await createWith(svc, svc.name('delete-sealed'), ['a']);
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      expect((await svc.del(name)).status).toBe(204);
      expect((await svc.put(name, { headers: TEXT })).status).toBe(201);
      expect((await svc.head(name)).header('svc-closed')).toBe('false');
      expect((await svc.post(name, { headers: TEXT, body: 'b' })).status).toBe(200);
    });
  });

  describe('list', () => {
    test('the list holds one entry per stream with every field, sorted by name', async () => {
      const p = svc.name('list');
      const names = [`${p}/b`, `${p}/a`, `${p}/c/d`, `${p}/B`, `${p}/a0`];
      for (const n of names) expect((await svc.put(n, { headers: TEXT })).status).toBe(201);
      expect((await svc.post(`${p}/a`, jsonBatch([{ body: '1' }, { body: '2' }, { body: '3' }]))).status).toBe(200);
      expect((await svc.post(`${p}/a`, { headers: { 'svc-trim-seq': '1' } })).status).toBe(200);
      expect((await svc.post(`${p}/b`, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const page = await list({ prefix: `${p}/` });
      expect(page.has_more).toBe(false);
      expect(page.streams.map((s) => s.name)).toEqual([...names].sort());
      const a = page.streams.find((s) => s.name === `${p}/a`);
      expect(a).toEqual({ name: `${p}/a`, content_type: 'text/plain', start_seq: 1, next_seq: 3, closed: false, ttl: null, expires_at: null });
      expect(page.streams.find((s) => s.name === `${p}/b`)?.closed).toBe(true);
    });

    test('an entry reports ttl in seconds and expires_at as ISO-8601 UTC', async () => {
      const name = svc.name('list-retention');
      expect((await svc.put(name, { headers: { 'svc-ttl': '120', 'svc-expires-at': String(Date.UTC(2044, 1, 3)) } })).status).toBe(201);
      const [entry] = (await list({ prefix: name })).streams;
      expect(entry).toEqual<ListEntry>({
        name,
        content_type: 'application/octet-stream',
        start_seq: 0,
        next_seq: 0,
        closed: false,
        ttl: 120,
        expires_at: '2044-02-03T00:00:00.000Z',
      });
    });

    test('prefix keeps only names that start with it', async () => {
      const p = svc.name('prefix');
      for (const n of [`${p}/x/1`, `${p}/x/2`, `${p}/y/1`, `${p}x`]) expect((await svc.put(n)).status).toBe(201);
      expect((await list({ prefix: `${p}/x/` })).streams.map((s) => s.name)).toEqual([`${p}/x/1`, `${p}/x/2`]);
      expect((await list({ prefix: `${p}/` })).streams.map((s) => s.name)).toEqual([`${p}/x/1`, `${p}/x/2`, `${p}/y/1`]);
      expect((await list({ prefix: p })).streams.map((s) => s.name)).toEqual([`${p}/x/1`, `${p}/x/2`, `${p}/y/1`, `${p}x`]);
      expect((await list({ prefix: `${p}/z` })).streams).toEqual([]);
    });

    test('without a prefix the list covers every stream', async () => {
      const name = await createWith(svc, svc.name('no-prefix'));
      const seen: string[] = [];
      let after = '';
      for (;;) {
        const page = await list(after === '' ? {} : { start_after: after });
        seen.push(...page.streams.map((s) => s.name));
        if (!page.has_more) break;
        after = page.streams[page.streams.length - 1]!.name;
      }
      expect(seen).toContain(name);
    });

    test('start_after continues after the given name', async () => {
      const p = svc.name('start-after');
      for (const n of ['a', 'b', 'c', 'd']) expect((await svc.put(`${p}/${n}`)).status).toBe(201);
      expect((await list({ prefix: `${p}/`, start_after: `${p}/b` })).streams.map((s) => s.name)).toEqual([`${p}/c`, `${p}/d`]);
      // A name that is not a stream works as a position too.
      expect((await list({ prefix: `${p}/`, start_after: `${p}/bb` })).streams.map((s) => s.name)).toEqual([`${p}/c`, `${p}/d`]);
      expect((await list({ prefix: `${p}/`, start_after: `${p}/d` })).streams).toEqual([]);
    });

    test('limit caps the page and has_more says whether more entries follow', async () => {
      const p = svc.name('limit');
      for (const n of ['a', 'b', 'c']) expect((await svc.put(`${p}/${n}`)).status).toBe(201);
      const two = await list({ prefix: `${p}/`, limit: 2 });
      expect(two.streams.map((s) => s.name)).toEqual([`${p}/a`, `${p}/b`]);
      expect(two.has_more).toBe(true);
      const three = await list({ prefix: `${p}/`, limit: 3 });
      expect(three.streams).toHaveLength(3);
      expect(three.has_more).toBe(false);
      const zero = await list({ prefix: `${p}/`, limit: 0 });
      expect(zero.streams).toEqual([]);
      expect(zero.has_more).toBe(true);
    });

    test('paging through 25 streams with limit 7 returns each exactly once, in order', async () => {
      const p = svc.name('paging');
      const names = Array.from({ length: 25 }, (_, i) => `${p}/s-${String((i * 11) % 25).padStart(2, '0')}`);
      const created = await Promise.all(names.map((n) => svc.put(n, { headers: TEXT })));
      for (const c of created) expect(c.status).toBe(201);
      const seen: string[] = [];
      const sizes: number[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await list(after === undefined ? { prefix: `${p}/`, limit: 7 } : { prefix: `${p}/`, limit: 7, start_after: after });
        sizes.push(page.streams.length);
        seen.push(...page.streams.map((s) => s.name));
        if (!page.has_more) break;
        after = page.streams[page.streams.length - 1]!.name;
      }
      expect(sizes).toEqual([7, 7, 7, 4]);
      expect(seen).toEqual([...names].sort());
    });

    test('deleted and never-created streams are not listed', async () => {
      const p = svc.name('list-deleted');
      for (const n of ['a', 'b', 'c']) expect((await svc.put(`${p}/${n}`)).status).toBe(201);
      expect((await svc.del(`${p}/b`)).status).toBe(204);
      expect((await list({ prefix: `${p}/` })).streams.map((s) => s.name)).toEqual([`${p}/a`, `${p}/c`]);
    });

    test.each(['-1', 'x', '1.5'])('limit=%j answers 400', async (limit) => {
      expectError(await svc.request('GET', `/?limit=${limit}`), 400);
    });

    test('an unknown or repeated list parameter answers 400', async () => {
      expectError(await svc.request('GET', '/?offset=3'), 400);
      expectError(await svc.request('GET', '/?prefix=/a&prefix=/b'), 400);
    });
  });

  describe('names', () => {
    test('a path with slashes is one stream, and its parents are not streams', async () => {
      const p = svc.name('nested');
      const name = `${p}/a/b/c`;
      expect((await svc.put(name, { headers: TEXT, body: 'deep' })).status).toBe(201);
      expect((await svc.head(`${p}/a/b`)).status).toBe(404);
      expect((await svc.head(`${p}/a`)).status).toBe(404);
      expect((await svc.read(name)).records.map((r) => r.body)).toEqual(['deep']);
      expect((await list({ prefix: p })).streams.map((s) => s.name)).toEqual([name]);
    });

    test('a percent-encoded name round-trips: /caf%C3%A9 is listed as /café', async () => {
      const p = svc.name('pct');
      const encoded = `${p}/caf%C3%A9`;
      expect((await svc.put(encoded, { headers: TEXT, body: 'crème' })).status).toBe(201);
      const page = await list({ prefix: `${p}/` });
      expect(page.streams.map((s) => s.name)).toEqual([`${p}/café`]);
      expect((await svc.head(encoded)).status).toBe(200);
      // Hex digits in either case name the same bytes (RFC 3986 section 6.2.2.1).
      expect((await svc.head(`${p}/caf%c3%a9`)).status).toBe(200);
      expect((await svc.read(encoded)).records.map((r) => r.body)).toEqual(['crème']);
      expect((await svc.del(`${p}/${encodeURIComponent('café')}`)).status).toBe(204);
    });

    test('characters that need no encoding and their encoded forms name the same stream', async () => {
      const p = svc.name('pct-plain');
      expect((await svc.put(`${p}/a-b`, { headers: TEXT })).status).toBe(201);
      expect((await svc.put(`${p}/a%2Db`, { headers: TEXT })).status).toBe(200);
      expect((await list({ prefix: `${p}/` })).streams.map((s) => s.name)).toEqual([`${p}/a-b`]);
    });
  });
});
