/**
 * Create (`PUT /{stream}`), spec/stream-service.md "Create" and the stream state table:
 * absent → open (201), absent → sealed with Svc-Closed, open or sealed → unchanged (200 on
 * the same content type, 409 on a different one). Run against both HTTP engines.
 */
import { ENGINES, type ListPage, expectError, useNode } from './client';

describe.each(ENGINES)('create over the %s engine', (engine) => {
  const svc = useNode(engine);

  async function listEntry(name: string) {
    const res = await svc.list({ prefix: name });
    expect(res.status).toBe(200);
    const page = res.json<ListPage>();
    return page.streams.find((s) => s.name === name);
  }

  test('creating an absent stream answers 201 with Svc-Next-Seq 0', async () => {
    const name = svc.name('create');
    const res = await svc.put(name, { headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(201);
    expect(res.header('svc-next-seq')).toBe('0');
  });

  test('creating an existing stream with the same content type answers 200 with its Svc-Next-Seq', async () => {
    const name = svc.name('same-type');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await svc.post(name, { headers: { 'content-type': 'text/plain' }, body: 'one' })).status).toBe(200);
    const again = await svc.put(name, { headers: { 'content-type': 'text/plain' } });
    expect(again.status).toBe(200);
    expect(again.header('svc-next-seq')).toBe('1');
  });

  test('content types that differ only in case and parameters count as the same type', async () => {
    const name = svc.name('type-case');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const again = await svc.put(name, { headers: { 'content-type': 'Text/Plain; charset=utf-8' } });
    expect(again.status).toBe(200);
    expect(again.header('svc-next-seq')).toBe('0');

    const other = svc.name('type-case-params');
    expect((await svc.put(other, { headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(201);
    expect((await svc.put(other, { headers: { 'content-type': 'APPLICATION/JSON' } })).status).toBe(200);
  });

  test('creating an existing stream with a different content type answers 409 conflict and changes nothing', async () => {
    const name = svc.name('conflict');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const res = await svc.put(name, { headers: { 'content-type': 'application/json' } });
    expectError(res, 409, 'conflict');
    const head = await svc.head(name);
    expect(head.status).toBe(200);
    expect(head.header('content-type')).toBe('text/plain');
  });

  test('creating without a content type on a stream of another type answers 409, since the default is application/octet-stream', async () => {
    const name = svc.name('conflict-default');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expectError(await svc.put(name), 409, 'conflict');
  });

  test('a repeated create with a body on an existing stream appends nothing', async () => {
    const name = svc.name('idempotent-body');
    const first = await svc.put(name, { headers: { 'content-type': 'text/plain' }, body: 'first' });
    expect(first.status).toBe(201);
    expect(first.header('svc-next-seq')).toBe('1');
    const again = await svc.put(name, { headers: { 'content-type': 'text/plain' }, body: 'second' });
    expect(again.status).toBe(200);
    expect(again.header('svc-next-seq')).toBe('1');
    const { records } = await svc.read(name);
    expect(records.map((r) => r.body)).toEqual(['first']);
  });

  test('Svc-Closed: true creates the stream already sealed, and a following append answers 409 conflict', async () => {
    const name = svc.name('sealed');
    const res = await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-closed': 'true' } });
    expect(res.status).toBe(201);
    const head = await svc.head(name);
    expect(head.header('svc-closed')).toBe('true');
    expectError(await svc.post(name, { headers: { 'content-type': 'text/plain' }, body: 'late' }), 409, 'conflict');
    expect(await svc.nextSeq(name)).toBe(0);
    expect((await listEntry(name))?.closed).toBe(true);
  });

  test('Svc-Closed: false creates an open stream', async () => {
    const name = svc.name('open');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-closed': 'false' } })).status).toBe(201);
    expect((await svc.head(name)).header('svc-closed')).toBe('false');
    expect((await svc.post(name, { headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(200);
  });

  test('a sealed stream answers 200 to a create with the same content type and 409 to a different one', async () => {
    const name = svc.name('sealed-again');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-closed': 'true' } })).status).toBe(201);
    const same = await svc.put(name, { headers: { 'content-type': 'text/plain' } });
    expect(same.status).toBe(200);
    expect(same.header('svc-next-seq')).toBe('0');
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json' } }), 409, 'conflict');
    expect((await svc.head(name)).header('svc-closed')).toBe('true');
  });

  test('the create body becomes record 0, keyed by Svc-Key', async () => {
    const name = svc.name('body');
    const res = await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-key': 'k-0' }, body: 'initial' });
    expect(res.status).toBe(201);
    expect(res.header('svc-next-seq')).toBe('1');
    const { records } = await svc.read(name);
    expect(records).toEqual([{ seq: 0, timestamp: expect.any(Number), key: 'k-0', body: 'initial' }]);
  });

  test('a create with a body and Svc-Closed: true stores the body and seals the stream', async () => {
    const name = svc.name('body-sealed');
    const res = await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-closed': 'true' }, body: 'only' });
    expect(res.status).toBe(201);
    expect(res.header('svc-next-seq')).toBe('1');
    const { res: read, records } = await svc.read(name);
    expect(records.map((r) => r.body)).toEqual(['only']);
    expect(read.header('svc-closed')).toBe('true');
    expectError(await svc.post(name, { headers: { 'content-type': 'text/plain' }, body: 'more' }), 409, 'conflict');
  });

  test('the content type defaults to application/octet-stream', async () => {
    const name = svc.name('default-type');
    expect((await svc.put(name)).status).toBe(201);
    const head = await svc.head(name);
    expect(head.status).toBe(200);
    expect(head.header('content-type')).toBe('application/octet-stream');
    expect((await listEntry(name))?.content_type).toBe('application/octet-stream');
  });

  test('the content type is stored as given and reported by HEAD and the list', async () => {
    const name = svc.name('given-type');
    expect((await svc.put(name, { headers: { 'content-type': 'application/x-ndjson' } })).status).toBe(201);
    expect((await svc.head(name)).header('content-type')).toBe('application/x-ndjson');
    expect((await listEntry(name))?.content_type).toBe('application/x-ndjson');
  });

  test('a stream without retention reports no Svc-TTL or Svc-Expires-At and null ttl and expires_at', async () => {
    const name = svc.name('no-retention');
    expect((await svc.put(name)).status).toBe(201);
    const head = await svc.head(name);
    expect(head.header('svc-ttl')).toBeUndefined();
    expect(head.header('svc-expires-at')).toBeUndefined();
    expect(head.header('svc-start-seq')).toBe('0');
    expect(head.header('svc-next-seq')).toBe('0');
    expect(head.header('svc-closed')).toBe('false');
    expect(await listEntry(name)).toEqual({
      name,
      content_type: 'application/octet-stream',
      start_seq: 0,
      next_seq: 0,
      closed: false,
      ttl: null,
      expires_at: null,
    });
  });

  test('Svc-TTL is reported by HEAD and as ttl in the list entry', async () => {
    const name = svc.name('ttl');
    expect((await svc.put(name, { headers: { 'svc-ttl': '3600' } })).status).toBe(201);
    expect((await svc.head(name)).header('svc-ttl')).toBe('3600');
    expect((await listEntry(name))?.ttl).toBe(3600);
  });

  test('Svc-TTL 0 is accepted and reported', async () => {
    const name = svc.name('ttl-zero');
    expect((await svc.put(name, { headers: { 'svc-ttl': '0' } })).status).toBe(201);
    expect((await svc.head(name)).header('svc-ttl')).toBe('0');
    expect((await listEntry(name))?.ttl).toBe(0);
  });

  test('Svc-Expires-At in RFC 3339 with an offset is reported as ISO-8601 UTC by HEAD and the list', async () => {
    const name = svc.name('expires-rfc3339');
    const res = await svc.put(name, { headers: { 'svc-expires-at': '2040-05-06T07:08:09+02:00' } });
    expect(res.status).toBe(201);
    expect((await svc.head(name)).header('svc-expires-at')).toBe('2040-05-06T05:08:09.000Z');
    expect((await listEntry(name))?.expires_at).toBe('2040-05-06T05:08:09.000Z');
  });

  test('Svc-Expires-At in unix milliseconds is reported as ISO-8601 UTC by HEAD and the list', async () => {
    const name = svc.name('expires-ms');
    const ms = Date.UTC(2041, 0, 2, 3, 4, 5, 678);
    expect((await svc.put(name, { headers: { 'svc-expires-at': String(ms) } })).status).toBe(201);
    expect((await svc.head(name)).header('svc-expires-at')).toBe('2041-01-02T03:04:05.678Z');
    expect((await listEntry(name))?.expires_at).toBe('2041-01-02T03:04:05.678Z');
  });

  test('Svc-TTL and Svc-Expires-At can be given together', async () => {
    const name = svc.name('ttl-and-expiry');
    const res = await svc.put(name, { headers: { 'svc-ttl': '60', 'svc-expires-at': '2042-01-01T00:00:00Z' } });
    expect(res.status).toBe(201);
    const head = await svc.head(name);
    expect(head.header('svc-ttl')).toBe('60');
    expect(head.header('svc-expires-at')).toBe('2042-01-01T00:00:00.000Z');
    const entry = await listEntry(name);
    expect(entry).toMatchObject({ ttl: 60, expires_at: '2042-01-01T00:00:00.000Z' });
  });

  test.each(['-1', 'abc', '1.5', '', '1e3'])('Svc-TTL %j is refused with 400 and no stream is created', async (ttl) => {
    const name = svc.name('bad-ttl');
    expectError(await svc.put(name, { headers: { 'svc-ttl': ttl } }), 400);
    expect((await svc.head(name)).status).toBe(404);
  });

  test.each(['tomorrow', '2040-01-01', '2040-13-01T00:00:00Z', '2040-02-30T00:00:00Z', '2040-01-01T24:00:00Z', '2040-01-01T00:00:00', '-5'])(
    'Svc-Expires-At %j is refused with 400 and no stream is created',
    async (at) => {
      const name = svc.name('bad-expiry');
      expectError(await svc.put(name, { headers: { 'svc-expires-at': at } }), 400);
      expect((await svc.head(name)).status).toBe(404);
    },
  );

  test.each(['yes', '1', 'closed'])('Svc-Closed %j is refused with 400 and no stream is created', async (closed) => {
    const name = svc.name('bad-closed');
    expectError(await svc.put(name, { headers: { 'svc-closed': closed } }), 400);
    expect((await svc.head(name)).status).toBe(404);
  });
});
