/**
 * The state file: what survives a restart (definitions, links, acked offsets, generations,
 * the signing and token keys), what does not (wakes and leases, so pending work is offered
 * again), and how the file is written.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeListener, memoryLogger, offsetAfter, start, tempDir, waitUntil } from './fixtures';
import { Subscriptions } from '../../../../src/gateway/ds/subscriptions';

const pull = { type: 'pull-wake', pattern: 'events/*', wake_stream: 'wake/pool', lease_ttl_ms: 1000 };
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('subscription state file', () => {
  test('definitions, acked offsets, the signing key and the wake generation survive a restart; a token from before is fenced', async () => {
    const stateFile = join(tempDir(), 'state', 'subscriptions.json');
    const listener = new FakeListener();
    listener.put('wake/pool');
    const one = start({ listener, stateFile });
    await one.call('PUT', 'subscriptions/p', pull);
    await one.call('PUT', 'subscriptions/m', { type: 'pull-wake', streams: ['manual/a'], wake_stream: 'wake/pool', description: 'kept' });
    const kid = (await one.call('GET', 'jwks.json')).json.keys[0].kid;
    listener.put('events/a', 1, 2);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    const c = (await one.call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;
    const ack = { wake_id: c.wake_id, generation: c.generation, acks: [{ stream: 'events/a', offset: offsetAfter(2) }], done: true };
    expect((await one.call('POST', 'subscriptions/p/ack', ack, bearer(c.token))).status).toBe(200);
    const before = { p: (await one.call('GET', 'subscriptions/p')).json, m: (await one.call('GET', 'subscriptions/m')).json };
    await one.subs.close();

    const two = start({ listener, stateFile });
    expect((await two.call('GET', 'jwks.json')).json.keys[0].kid).toBe(kid);
    expect((await two.call('GET', 'subscriptions/p')).json).toEqual(before.p);
    expect((await two.call('GET', 'subscriptions/m')).json).toEqual(before.m);
    const stale = await two.call('POST', 'subscriptions/p/ack', ack, bearer(c.token));
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('FENCED');

    listener.post('events/a', 3);
    const c2 = (await two.call('POST', 'subscriptions/p/claim', { worker: 'w1' })).json;
    expect(c2.generation).toBe(c.generation + 1);
  });

  test('work left pending at shutdown is offered again after the restart', async () => {
    const stateFile = join(tempDir(), 'subscriptions.json');
    const listener = new FakeListener();
    listener.put('wake/pool');
    const one = start({ listener, stateFile });
    await one.call('PUT', 'subscriptions/p', pull);
    listener.put('events/a', 1);
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 1);
    await one.subs.close();

    start({ listener, stateFile });
    await waitUntil(() => listener.streams.get('wake/pool')!.length === 2);
    expect(listener.streams.get('wake/pool')!.map((e) => (e as { generation: number }).generation)).toEqual([1, 2]);
  });

  test('the file is replaced whole: version 1 JSON, no temporary file left beside it, deleted subscriptions gone', async () => {
    const dir = tempDir();
    const stateFile = join(dir, 'subscriptions.json');
    const { subs, call } = start({ stateFile });
    await call('PUT', 'subscriptions/a', pull);
    await call('PUT', 'subscriptions/b', pull);
    await call('DELETE', 'subscriptions/a');
    await subs.close();
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(state.version).toBe(1);
    expect(state.signingKey).toEqual(expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', d: expect.any(String) }));
    expect(state.subscriptions.map((s: { id: string }) => s.id)).toEqual(['b']);
    expect(readdirSync(dir)).toEqual(['subscriptions.json']);
  });

  test('a new node writes its keys at once, so its JWKS is the same after a restart with no subscriptions', async () => {
    const stateFile = join(tempDir(), 'subscriptions.json');
    const one = start({ stateFile });
    const kid = (await one.call('GET', 'jwks.json')).json.keys[0].kid;
    await one.subs.close();
    expect(existsSync(stateFile)).toBe(true);
    expect((await start({ stateFile }).call('GET', 'jwks.json')).json.keys[0].kid).toBe(kid);
  });

  test('a state file that is not one stops the start instead of losing subscriptions', () => {
    const stateFile = join(tempDir(), 'subscriptions.json');
    writeFileSync(stateFile, '{"hello": 1}');
    expect(() => new Subscriptions({ host: new FakeListener(), log: memoryLogger(), stateFile })).toThrow(/not a version 1 subscription state file/);
  });
});
