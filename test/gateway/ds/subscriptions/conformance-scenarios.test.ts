/**
 * The six tests of the Durable Streams conformance suite's "Reserved subscription APIs" block
 * (@durable-streams/server-conformance-tests 0.3.6), step for step, against `Subscriptions`
 * alone: the listener is a fake that reports stream changes, the webhook receiver is real.
 */
import { BASE, offsetAfter, start, verifySignature, waitUntil, webhookReceiver } from './fixtures';

const webhookSub = (url: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'webhook',
  pattern: 'events/*',
  webhook: { url },
  lease_ttl_ms: 1000,
  ...extra,
});

describe('the conformance suite subscription scenarios', () => {
  test('creates a webhook subscription (201), re-confirms it idempotently (200) and describes it without a secret', async () => {
    const receiver = await webhookReceiver();
    const { call } = start();
    const def = webhookSub(receiver.url, { description: 'test subscription' });

    const create = await call('PUT', 'subscriptions/sub-1', def, { 'content-type': 'application/json' });
    expect(create.status).toBe(201);
    expect(create.headers['content-type']).toBe('application/json');
    expect(create.json.webhook_secret).toBeUndefined();
    expect(create.json.webhook.url).toBe(receiver.url);
    expect(create.json.webhook.signing.alg).toBe('ed25519');
    expect(create.json.webhook.signing.kid).toMatch(/^ds_/);
    expect(create.json.webhook.signing.jwks_url).toBe(`${BASE}__ds/jwks.json`);

    const jwks = await call('GET', 'jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.headers['content-type']).toContain('application/jwk-set+json');
    expect(jwks.json.keys).toContainEqual({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: create.json.webhook.signing.kid, x: expect.any(String) });

    const confirm = await call('PUT', 'subscriptions/sub-1', def);
    expect(confirm.status).toBe(200);
    expect(confirm.json.webhook_secret).toBeUndefined();

    const get = await call('GET', 'subscriptions/sub-1');
    expect(get.status).toBe(200);
    expect(get.json).toEqual({
      id: 'sub-1',
      subscription_id: 'sub-1',
      type: 'webhook',
      pattern: 'events/*',
      streams: [],
      webhook: { url: receiver.url, signing: create.json.webhook.signing },
      lease_ttl_ms: 1000,
      created_at: expect.any(String),
      status: 'active',
      description: 'test subscription',
    });

    expect((await call('DELETE', 'subscriptions/sub-1')).status).toBe(204);
    expect((await call('GET', 'subscriptions/sub-1')).status).toBe(404);
  });

  test('rejects a webhook URL on a private address with 400 WEBHOOK_URL_REJECTED', async () => {
    const { call } = start();
    const res = await call('PUT', 'subscriptions/sub-2', { type: 'webhook', pattern: 'events/*', webhook: { url: 'http://10.0.0.1/hook' } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('WEBHOOK_URL_REJECTED');
    expect((await call('GET', 'subscriptions/sub-2')).status).toBe(404);
  });

  test('a webhook answered {"done": true} auto-acks the tails the wake reported', async () => {
    const receiver = await webhookReceiver(() => ({ body: { done: true } }));
    const { call, listener } = start();
    const create = await call('PUT', 'subscriptions/sub-3', webhookSub(receiver.url));
    expect(create.status).toBe(201);
    const jwks = (await call('GET', 'jwks.json')).json;

    listener.put('events/sync-1', { event: 'created' });
    const n = await receiver.waitFor(1);
    expect(n.signature).toMatch(/^t=\d+,kid=.+,ed25519=[A-Za-z0-9_-]+$/);
    expect(verifySignature(n.rawBody, n.signature, jwks)).toBe(true);
    expect(n.body.subscription_id).toBe('sub-3');
    expect(n.body.callback_url).toBe(`${BASE}__ds/subscriptions/sub-3/callback`);
    const stream = n.body.streams.find((s) => s.path === 'events/sync-1')!;
    expect(stream).toEqual({ path: 'events/sync-1', link_type: 'glob', acked_offset: '-1', tail_offset: offsetAfter(1), has_pending: true });

    await waitUntil(async () => {
      const body = (await call('GET', 'subscriptions/sub-3')).json;
      return body.streams.some((s: { path: string; acked_offset: string }) => s.path === 'events/sync-1' && s.acked_offset === stream.tail_offset);
    });
    expect(receiver.received).toHaveLength(1); // nothing pending after the auto-ack: no second wake
  });

  test('a webhook callback acks with done, and the same callback again is fenced with 409 FENCED', async () => {
    const receiver = await webhookReceiver();
    const { call, listener } = start();
    await call('PUT', 'subscriptions/sub-4', webhookSub(receiver.url));
    listener.put('events/callback-1', { event: 'created' });
    const { body } = await receiver.waitFor(1);
    const tail = body.streams.find((s) => s.path === 'events/callback-1')!.tail_offset;
    const ack = { wake_id: body.wake_id, generation: body.generation, acks: [{ stream: 'events/callback-1', offset: tail }], done: true };
    expect(body.callback_url).toBe(`${BASE}__ds/subscriptions/sub-4/callback`);
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${body.callback_token}` };

    const callback = await call('POST', 'subscriptions/sub-4/callback', ack, auth);
    expect(callback.status).toBe(200);
    expect(callback.json).toEqual({ ok: true, next_wake: false });

    const stale = await call('POST', 'subscriptions/sub-4/callback', ack, auth);
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('FENCED');
    const get = (await call('GET', 'subscriptions/sub-4')).json;
    expect(get.streams).toEqual([{ path: 'events/callback-1', link_type: 'glob', acked_offset: tail }]);
  });

  test('adds an explicit stream (204) and removes it by its encoded path (204)', async () => {
    const receiver = await webhookReceiver();
    const { call } = start();
    const create = await call('PUT', 'subscriptions/sub-5', { type: 'webhook', streams: ['manual/a'], webhook: { url: receiver.url } });
    expect(create.status).toBe(201);
    expect(create.json.lease_ttl_ms).toBe(30000);

    const add = await call('POST', 'subscriptions/sub-5/streams', { streams: ['manual/b'] });
    expect(add.status).toBe(204);
    expect(add.text).toBe('');
    const remove = await call('DELETE', `subscriptions/sub-5/streams/${encodeURIComponent('manual/b')}`);
    expect(remove.status).toBe(204);

    const get = (await call('GET', 'subscriptions/sub-5')).json;
    expect(get.streams).toContainEqual(expect.objectContaining({ path: 'manual/a', link_type: 'explicit' }));
    expect(get.streams.some((s: { path: string }) => s.path === 'manual/b')).toBe(false);
  });

  test('pull-wake: a wake event, claim, ALREADY_CLAIMED for a second worker, ack, a new claim after an append, release', async () => {
    const { call, listener } = start();
    listener.put('wake/pool-1');
    const create = await call('PUT', 'subscriptions/pull-1', { type: 'pull-wake', pattern: 'events/*', wake_stream: 'wake/pool-1', lease_ttl_ms: 1000 });
    expect(create.status).toBe(201);

    listener.put('events/pull-1', { event: 'created' });
    await waitUntil(() => listener.streams.get('wake/pool-1')!.some((e) => (e as { subscription_id?: string }).subscription_id === 'pull-1'));
    expect(listener.streams.get('wake/pool-1')).toEqual([
      { type: 'wake', subscription_id: 'pull-1', stream: 'events/pull-1', generation: 1, ts: expect.any(Number) },
    ]);

    const claim = await call('POST', 'subscriptions/pull-1/claim', { worker: 'worker-1' });
    expect(claim.status).toBe(200);
    expect(claim.json).toEqual({
      wake_id: expect.stringMatching(/^w_/),
      generation: 1,
      token: expect.any(String),
      streams: [{ path: 'events/pull-1', link_type: 'glob', acked_offset: '-1', tail_offset: offsetAfter(1), has_pending: true }],
      lease_ttl_ms: 1000,
    });
    const tail = claim.json.streams[0].tail_offset;

    const busy = await call('POST', 'subscriptions/pull-1/claim', { worker: 'worker-2' });
    expect(busy.status).toBe(409);
    expect(busy.json.error).toEqual(expect.objectContaining({ code: 'ALREADY_CLAIMED', current_holder: 'worker-1', generation: 1 }));

    const ack = await call(
      'POST',
      'subscriptions/pull-1/ack',
      { wake_id: claim.json.wake_id, generation: claim.json.generation, acks: [{ stream: 'events/pull-1', offset: tail }], done: true },
      { authorization: `Bearer ${claim.json.token}` },
    );
    expect(ack.status).toBe(200);
    expect(ack.json).toEqual({ ok: true, next_wake: false });

    listener.post('events/pull-1', { event: 'second' });
    const claim2 = await call('POST', 'subscriptions/pull-1/claim', { worker: 'worker-1' });
    expect(claim2.status).toBe(200);
    expect(claim2.json.generation).toBe(2);
    expect(claim2.json.streams).toEqual([{ path: 'events/pull-1', link_type: 'glob', acked_offset: tail, tail_offset: offsetAfter(2), has_pending: true }]);

    const release = await call(
      'POST',
      'subscriptions/pull-1/release',
      { wake_id: claim2.json.wake_id, generation: claim2.json.generation },
      { authorization: `Bearer ${claim2.json.token}` },
    );
    expect(release.status).toBe(204);
    // The released work is still pending, so it is offered again at once.
    await waitUntil(() => listener.streams.get('wake/pool-1')!.length === 3);
    expect(listener.streams.get('wake/pool-1')!.map((e) => (e as { generation: number }).generation)).toEqual([1, 2, 3]);
  });
});
