/**
 * Webhook wakes beyond the conformance suite: leases, fencing, retries, follow-up wakes and
 * the acks a callback may carry.
 */
import { memoryLogger, offsetAfter, sleep, start, waitUntil, webhookReceiver } from './fixtures';

const sub = (url: string): Record<string, unknown> => ({ type: 'webhook', pattern: 'events/*', webhook: { url }, lease_ttl_ms: 1000 });
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('webhook wakes', () => {
  test('a wake whose lease expires without a callback is delivered again with the next generation, and the old wake is fenced', async () => {
    const receiver = await webhookReceiver();
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1);
    const first = (await receiver.waitFor(1)).body;
    const second = (await receiver.waitFor(2, 3000)).body;
    expect(second.generation).toBe(first.generation + 1);
    expect(second.wake_id).not.toBe(first.wake_id);

    const old = await call('POST', 'subscriptions/s/callback', { wake_id: first.wake_id, generation: first.generation, done: true }, bearer(first.callback_token));
    expect(old.status).toBe(409);
    expect(old.json.error.code).toBe('FENCED');
    const mixed = await call('POST', 'subscriptions/s/callback', { wake_id: second.wake_id, generation: second.generation, done: true }, bearer(first.callback_token));
    expect(mixed.status).toBe(409);
    expect(mixed.json.error.code).toBe('FENCED');
    const current = await call('POST', 'subscriptions/s/callback', { wake_id: second.wake_id, generation: second.generation, done: true }, bearer(second.callback_token));
    expect(current.status).toBe(200);
    // Done without acks leaves the message pending, so the next wake follows at once.
    expect(current.json).toEqual({ ok: true, next_wake: true });
    expect((await receiver.waitFor(3)).body.generation).toBe(second.generation + 1);
  });

  test('a callback without done is a heartbeat: it applies its acks and restarts the lease', async () => {
    const receiver = await webhookReceiver();
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1, 2);
    const w = (await receiver.waitFor(1)).body;
    const beat = { wake_id: w.wake_id, generation: w.generation };
    await sleep(600);
    const r1 = await call('POST', 'subscriptions/s/callback', { ...beat, acks: [{ stream: 'events/a', offset: offsetAfter(1) }] }, bearer(w.callback_token));
    expect(r1.json).toEqual({ ok: true, next_wake: false });
    await sleep(600);
    expect((await call('POST', 'subscriptions/s/callback', beat, bearer(w.callback_token))).status).toBe(200);
    await sleep(600);
    expect(receiver.received).toHaveLength(1); // 1.8 s after delivery, the 1 s lease still holds
    const done = await call('POST', 'subscriptions/s/callback', { ...beat, acks: [{ stream: 'events/a', offset: offsetAfter(2) }], done: true }, bearer(w.callback_token));
    expect(done.json).toEqual({ ok: true, next_wake: false });
    expect((await call('GET', 'subscriptions/s')).json.streams).toEqual([{ path: 'events/a', link_type: 'glob', acked_offset: offsetAfter(2) }]);
  });

  test('appends during a wake start no second wake; done with work left answers next_wake true and delivers the new tail', async () => {
    const receiver = await webhookReceiver();
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1);
    const w = (await receiver.waitFor(1)).body;
    listener.post('events/a', 2);
    listener.put('events/b', 1);
    await sleep(100);
    expect(receiver.received).toHaveLength(1);

    const done = await call(
      'POST',
      'subscriptions/s/callback',
      { wake_id: w.wake_id, generation: w.generation, acks: [{ stream: 'events/a', offset: offsetAfter(1) }], done: true },
      bearer(w.callback_token),
    );
    expect(done.json).toEqual({ ok: true, next_wake: true });
    const next = (await receiver.waitFor(2)).body;
    expect(next.generation).toBe(w.generation + 1);
    expect(next.streams).toEqual([
      { path: 'events/a', link_type: 'glob', acked_offset: offsetAfter(1), tail_offset: offsetAfter(2), has_pending: true },
      { path: 'events/b', link_type: 'glob', acked_offset: '-1', tail_offset: offsetAfter(1), has_pending: true },
    ]);
  });

  test('a receiver may call back before it answers: the wake ends at once and the late answer is ignored', async () => {
    let callback: Promise<{ status: number; json: unknown }> | null = null;
    const receiver = await webhookReceiver(async (_n, r) => {
      const w = r.body;
      callback = call('POST', 'subscriptions/s/callback', { wake_id: w.wake_id, generation: w.generation, acks: [{ stream: 'events/a', offset: w.streams[0]!.tail_offset }], done: true }, bearer(w.callback_token));
      await callback;
      return {};
    });
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1);
    await receiver.waitFor(1);
    await waitUntil(() => receiver.answered === 1);
    expect(await callback).toEqual(expect.objectContaining({ status: 200, json: { ok: true, next_wake: false } }));
    await sleep(1300); // past the lease an answer would have started
    expect(receiver.received).toHaveLength(1);
    expect((await call('GET', 'subscriptions/s')).json.status).toBe('active');
  });

  test('a failed delivery is retried with the same wake, and the subscription shows failed until one succeeds', async () => {
    const receiver = await webhookReceiver((n) => (n === 1 ? { status: 500 } : { body: { done: true } }));
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1);
    const first = (await receiver.waitFor(1)).body;
    await waitUntil(async () => (await call('GET', 'subscriptions/s')).json.status === 'failed');
    expect((await call('GET', 'subscriptions/s')).json.next_attempt_at).toEqual(expect.any(String));

    const retry = (await receiver.waitFor(2, 3000)).body;
    expect(retry.wake_id).toBe(first.wake_id);
    expect(retry.generation).toBe(first.generation);
    await waitUntil(async () => {
      const got = (await call('GET', 'subscriptions/s')).json;
      return got.status === 'active' && got.streams[0].acked_offset === offsetAfter(1);
    });
    expect((await call('GET', 'subscriptions/s')).json.next_attempt_at).toBeUndefined();
  });

  test('an unreachable receiver is logged as a failed delivery and deleting the subscription stops the retries', async () => {
    const lines: Array<{ level: string; msg: string; obj: object }> = [];
    const { call, listener } = start({ log: memoryLogger(lines) });
    // A loopback port nobody listens on: the POST is refused at once.
    await call('PUT', 'subscriptions/s', sub('http://127.0.0.1:9/webhook'));
    listener.put('events/a', 1);
    await waitUntil(() => lines.some((l) => l.msg === 'webhook delivery failed'));
    expect((await call('DELETE', 'subscriptions/s')).status).toBe(204);
    const failures = lines.filter((l) => l.msg === 'webhook delivery failed').length;
    await sleep(1300);
    expect(lines.filter((l) => l.msg === 'webhook delivery failed').length).toBe(failures);
  });

  test('acks that go backwards, pass the tail, name an unknown stream or are not offsets are refused with 409 INVALID_OFFSET and nothing is applied', async () => {
    const receiver = await webhookReceiver();
    const { call, listener } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    listener.put('events/a', 1, 2);
    const w = (await receiver.waitFor(1)).body;
    const send = (acks: unknown): ReturnType<typeof call> =>
      call('POST', 'subscriptions/s/callback', { wake_id: w.wake_id, generation: w.generation, acks }, bearer(w.callback_token));

    expect((await send([{ stream: 'events/a', offset: offsetAfter(2) }])).status).toBe(200);
    for (const acks of [
      [{ stream: 'events/a', offset: offsetAfter(1) }],
      [{ stream: 'events/a', offset: offsetAfter(3) }],
      [{ stream: 'events/zzz', offset: offsetAfter(1) }],
      [{ stream: 'events/a', offset: '-1' }],
      [{ stream: 'events/a', offset: 'abc' }],
    ]) {
      const res = await send(acks);
      expect(res.status).toBe(409);
      expect(res.json.error.code).toBe('INVALID_OFFSET');
    }
    listener.post('events/a', 3);
    // One bad ack in a batch refuses the whole batch.
    const batch = await send([
      { stream: 'events/a', offset: offsetAfter(3) },
      { stream: 'events/a', offset: offsetAfter(9) },
    ]);
    expect(batch.status).toBe(409);
    expect((await call('GET', 'subscriptions/s')).json.streams[0].acked_offset).toBe(offsetAfter(2));
  });

  test('callbacks without a bearer token, with a forged one or one of another subscription are 401 TOKEN_INVALID, an old one 401 TOKEN_EXPIRED', async () => {
    const receiver = await webhookReceiver();
    let clock = Date.now();
    const { call, listener } = start({ now: () => clock });
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    await call('PUT', 'subscriptions/t', { ...sub(receiver.url), pattern: 'other/*' });
    listener.put('events/a', 1);
    listener.put('other/a', 1);
    await receiver.waitFor(2);
    const ws = receiver.received.find((r) => r.body.subscription_id === 's')!.body;
    const wt = receiver.received.find((r) => r.body.subscription_id === 't')!.body;
    const body = { wake_id: ws.wake_id, generation: ws.generation };

    const expectCode = async (headers: Record<string, string>, code: string): Promise<void> => {
      const res = await call('POST', 'subscriptions/s/callback', body, headers);
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe(code);
    };
    await expectCode({}, 'TOKEN_INVALID');
    await expectCode({ authorization: 'Basic abc' }, 'TOKEN_INVALID');
    await expectCode(bearer(`${ws.callback_token}x`), 'TOKEN_INVALID');
    await expectCode(bearer(wt.callback_token), 'TOKEN_INVALID');
    clock += 2 * 3600 * 1000;
    await expectCode(bearer(ws.callback_token), 'TOKEN_EXPIRED');
  });

  test('ack, claim and release belong to pull-wake subscriptions: on a webhook subscription they are 400 INVALID_REQUEST', async () => {
    const receiver = await webhookReceiver();
    const { call } = start();
    await call('PUT', 'subscriptions/s', sub(receiver.url));
    for (const action of ['claim', 'ack', 'release']) {
      const res = await call('POST', `subscriptions/s/${action}`, { worker: 'w' }, bearer('x.y'));
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });
});
