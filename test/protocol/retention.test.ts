/**
 * Retention, spec/stream-service.md stream state table ("retention (Svc-TTL): records older
 * than TTL expire") and Create's Svc-Expires-At (absolute expiry: the stream goes away).
 * The node enforces retention every 100 ms so that one-second lifetimes are quick to observe.
 * Run against both HTTP engines.
 */
import { ENGINES, type ListPage, createWith, expectError, jsonBatch, sleep, useNode } from './client';

const TEXT = { 'content-type': 'text/plain' };

describe.each(ENGINES)('retention over the %s engine', (engine) => {
  const svc = useNode(engine, ['--retention-interval-ms', '100']);

  async function listed(name: string): Promise<ListPage['streams']> {
    const res = await svc.list({ prefix: name });
    expect(res.status).toBe(200);
    return res.json<ListPage>().streams.filter((s) => s.name === name);
  }

  test('records older than Svc-TTL expire while newer records and streams without a TTL stay', async () => {
    const short = svc.name('ttl-1');
    expect((await svc.put(short, { headers: { ...TEXT, 'svc-ttl': '1' } })).status).toBe(201);
    expect((await svc.post(short, { headers: TEXT, body: 'old' })).status).toBe(200);
    expect((await svc.post(short, jsonBatch([{ body: 'old-1' }, { body: 'old-2' }]))).status).toBe(200);
    const long = await createWith(svc, svc.name('no-ttl'));
    const kept = svc.name('ttl-3600');
    expect((await svc.put(kept, { headers: { ...TEXT, 'svc-ttl': '3600' } })).status).toBe(201);
    for (const name of [long, kept]) expect((await svc.post(name, { headers: TEXT, body: 'old' })).status).toBe(200);

    await sleep(2500);

    const res = await svc.post(short, { headers: TEXT, body: 'new' });
    expect(res.status).toBe(200);
    expect(res.header('svc-start-seq')).toBe('3');
    const { res: read, records } = await svc.read(short, { seq: 0 });
    expect(records.map((r) => [r.seq, r.body])).toEqual([[3, 'new']]);
    expect(read.header('svc-start-seq')).toBe('3');
    const head = await svc.head(short);
    expect(head.header('svc-start-seq')).toBe('3');
    expect(head.header('svc-next-seq')).toBe('4');
    expect((await listed(short))[0]).toMatchObject({ start_seq: 3, next_seq: 4, ttl: 1 });

    for (const name of [long, kept]) {
      expect((await svc.read(name)).records.map((r) => r.body)).toEqual(['old']);
      expect((await svc.head(name)).header('svc-start-seq')).toBe('0');
    }
  });

  test('a stream whose records all expired reads as empty at its tail and keeps taking appends', async () => {
    const name = svc.name('ttl-all');
    expect((await svc.put(name, { headers: { ...TEXT, 'svc-ttl': '1' }, body: 'first' })).status).toBe(201);
    await sleep(2200);
    const { res, records } = await svc.read(name);
    expect(records).toEqual([]);
    expect(res.header('svc-next-seq')).toBe('1');
    expect(res.header('svc-up-to-date')).toBe('true');
    expect((await svc.head(name)).header('svc-start-seq')).toBe('1');
    const appended = await svc.post(name, { headers: TEXT, body: 'second' });
    expect(appended.header('svc-start-seq')).toBe('1');
    expect((await svc.read(name)).records.map((r) => [r.seq, r.body])).toEqual([[1, 'second']]);
  });

  test('a stream past its Svc-Expires-At disappears and its name is reusable', async () => {
    const name = svc.name('expires');
    const at = new Date(Date.now() + 1000).toISOString();
    expect((await svc.put(name, { headers: { ...TEXT, 'svc-expires-at': at }, body: 'doomed' })).status).toBe(201);
    expect((await svc.head(name)).status).toBe(200);
    expect(await listed(name)).toHaveLength(1);

    await sleep(2000);

    expect((await svc.head(name)).status).toBe(404);
    expectError(await svc.get(name), 404);
    expectError(await svc.post(name, { headers: TEXT, body: 'late' }), 404);
    expect(await listed(name)).toEqual([]);

    const again = await svc.put(name, { headers: { 'content-type': 'application/json' } });
    expect(again.status).toBe(201);
    expect(again.header('svc-next-seq')).toBe('0');
    const head = await svc.head(name);
    expect(head.header('content-type')).toBe('application/json');
    expect(head.header('svc-expires-at')).toBeUndefined();
    expect((await svc.read(name)).records).toEqual([]);
  });

  test('a stream with Svc-Expires-At in unix milliseconds disappears at that time', async () => {
    const name = svc.name('expires-ms');
    expect((await svc.put(name, { headers: { ...TEXT, 'svc-expires-at': String(Date.now() + 800) } })).status).toBe(201);
    expect((await svc.head(name)).status).toBe(200);
    await sleep(1800);
    expect((await svc.head(name)).status).toBe(404);
    expect(await listed(name)).toEqual([]);
  });
});
