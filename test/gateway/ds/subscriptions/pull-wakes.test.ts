/**
 * Pull-wake subscriptions beyond the conformance suite: claims and their leases, and which
 * streams a subscription links.
 */
import { FakeListener, memoryLogger, offsetAfter, start, waitUntil } from './fixtures';

const pull = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'pull-wake',
  pattern: 'events/*',
  wake_stream: 'wake/pool',
  lease_ttl_ms: 1000,
  ...extra,
});
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const generations = (l: FakeListener): number[] => l.streams.get('wake/pool')!.map((e) => (e as { generation: number }).generation);

describe('pull-wake subscriptions', () => {
  test('a claim with nothing unacknowledged is 409 NO_PENDING_WORK', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    await call('PUT', 'subscriptions/p', pull());
    const res = await call('POST', 'subscriptions/p/claim', { worker: 'w1' });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('NO_PENDING_WORK');
    // An empty stream has nothing to read either.
    listener.put('events/empty');
    expect((await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json.error.code).toBe('NO_PENDING_WORK');
  });

  test('a claim needs a worker name: 400 INVALID_REQUEST without one', async () => {
    const { call } = start();
    for (const body of [{}, { worker: '' }, { worker: 7 }]) {
      const res = await call('POST', 'subscriptions/p/claim', body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });

  test('a claim whose lease expires frees the subscription for another worker and fences the first', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    await call('PUT', 'subscriptions/p', pull());
    listener.put('events/a', 1);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    const c1 = (await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;

    // The lease ends: the work is offered again under the next generation.
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 2, 3000);
    expect(generations(listener)).toEqual([1, 2]);
    const c2 = await call('POST', 'subscriptions/p/claim', { worker: 'w2' });
    expect(c2.status).toBe(200);
    expect(c2.json.generation).toBe(2);

    const late = await call('POST', 'subscriptions/p/ack', { wake_id: c1.wake_id, generation: c1.generation, done: true }, bearer(c1.token));
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe('FENCED');
    const lateRelease = await call('POST', 'subscriptions/p/release', { wake_id: c1.wake_id, generation: c1.generation }, bearer(c1.token));
    expect(lateRelease.json.error.code).toBe('FENCED');
  });

  test('an ack without done extends the claim; done with work left answers next_wake true and appends the next wake', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    await call('PUT', 'subscriptions/p', pull());
    listener.put('events/a', 1, 2);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    const c = (await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;
    const wake = { wake_id: c.wake_id, generation: c.generation };
    const part = await call('POST', 'subscriptions/p/ack', { ...wake, acks: [{ path: 'events/a', offset: offsetAfter(1) }] }, bearer(c.token));
    expect(part.json).toEqual({ ok: true, next_wake: false });
    listener.post('events/a', 3);
    const done = await call('POST', 'subscriptions/p/ack', { ...wake, acks: [{ stream: 'events/a', offset: offsetAfter(2) }], done: true }, bearer(c.token));
    expect(done.json).toEqual({ ok: true, next_wake: true });
    expect(generations(listener)).toEqual([1, 2]);
  });

  test('a missing wake stream is logged and the wake can still be claimed', async () => {
    const lines: Array<{ level: string; msg: string; obj: object }> = [];
    const { call, listener } = start({ log: memoryLogger(lines) });
    await call('PUT', 'subscriptions/p', pull());
    listener.put('events/a', 1);
    await waitUntil(() => lines.some((l) => l.level === 'warn' && l.msg === 'could not append a wake event to the wake stream'));
    const c = await call('POST', 'subscriptions/p/claim', { worker: 'w1' });
    expect(c.status).toBe(200);
    expect(c.json.generation).toBe(1);
  });

  test('the wake stream never wakes its own subscription, even when the pattern matches it', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    await call('PUT', 'subscriptions/p', pull({ pattern: '**' }));
    listener.put('events/a', 1);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    const c = (await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;
    expect(c.streams.map((s: { path: string }) => s.path)).toEqual(['events/a']);
    const done = await call(
      'POST',
      'subscriptions/p/ack',
      { wake_id: c.wake_id, generation: c.generation, acks: [{ stream: 'events/a', offset: offsetAfter(1) }], done: true },
      bearer(c.token),
    );
    expect(done.json).toEqual({ ok: true, next_wake: false });
    expect(listener.streams.get('wake/pool')).toHaveLength(1);
  });

  test('streams that exist when a pattern subscription is created are linked at their tail, so only later appends wake it', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    listener.put('events/old', 1, 2);
    listener.put('elsewhere/x', 1);
    const created = await call('PUT', 'subscriptions/p', pull());
    expect(created.json.streams).toEqual([{ path: 'events/old', link_type: 'glob', acked_offset: offsetAfter(2) }]);
    expect((await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json.error.code).toBe('NO_PENDING_WORK');
    listener.post('events/old', 3);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    const c = (await call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;
    expect(c.streams).toEqual([{ path: 'events/old', link_type: 'glob', acked_offset: offsetAfter(2), tail_offset: offsetAfter(3), has_pending: true }]);
  });

  test('without listStreams, a stream is linked at its first change after creation, from its beginning', async () => {
    const listener = new FakeListener(false);
    const { call } = start({ listener });
    listener.put('wake/pool');
    listener.put('events/old', 1, 2);
    expect((await call('PUT', 'subscriptions/p', pull())).json.streams).toEqual([]);
    listener.post('events/old', 3);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    expect((await call('GET', 'subscriptions/p')).json.streams).toEqual([{ path: 'events/old', link_type: 'glob', acked_offset: '-1' }]);
  });

  test('explicit streams start at their tail (or the zero offset before they exist) and wake once written', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    listener.put('manual/a', 1);
    await call('PUT', 'subscriptions/p', { type: 'pull-wake', streams: ['manual/a', 'manual/b'], wake_stream: 'wake/pool' });
    expect((await call('GET', 'subscriptions/p')).json.streams).toEqual([
      { path: 'manual/a', link_type: 'explicit', acked_offset: offsetAfter(1) },
      { path: 'manual/b', link_type: 'explicit', acked_offset: offsetAfter(0) },
    ]);
    listener.put('manual/b', 'x');
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    expect(listener.streams.get('wake/pool')![0]).toEqual(expect.objectContaining({ stream: 'manual/b' }));
  });

  test('removing an explicit stream that the pattern also matches keeps it as a glob link', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    await call('PUT', 'subscriptions/p', pull({ streams: ['events/a'] }));
    expect((await call('DELETE', 'subscriptions/p/streams/events%2Fa')).status).toBe(204);
    expect((await call('GET', 'subscriptions/p')).json.streams).toEqual([{ path: 'events/a', link_type: 'glob', acked_offset: offsetAfter(0) }]);
    expect((await call('DELETE', 'subscriptions/p/streams/not%2Flinked')).status).toBe(204);
  });

  test('a deleted stream is dropped from every subscription', async () => {
    const { call, listener } = start();
    listener.put('wake/pool');
    listener.put('events/a', 1);
    await call('PUT', 'subscriptions/p', pull({ streams: ['manual/a'] }));
    listener.delete('events/a');
    expect((await call('GET', 'subscriptions/p')).json.streams).toEqual([{ path: 'manual/a', link_type: 'explicit', acked_offset: offsetAfter(0) }]);
  });
});
