/**
 * The `__ds` request surface: validation, unknown routes and methods, missing subscriptions,
 * and conflicting definitions, each with its exact status and error code.
 */
import { BASE, start } from './fixtures';

const hook = { type: 'webhook', pattern: 'events/*', webhook: { url: 'http://127.0.0.1:1/hook' } };

describe('__ds requests', () => {
  test('a PUT of another definition under an existing id is 409 SUBSCRIPTION_ALREADY_EXISTS and changes nothing', async () => {
    const { call } = start();
    expect((await call('PUT', 'subscriptions/s', hook)).status).toBe(201);
    const other = await call('PUT', 'subscriptions/s', { ...hook, pattern: 'other/*' });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('SUBSCRIPTION_ALREADY_EXISTS');
    expect((await call('GET', 'subscriptions/s')).json.pattern).toBe('events/*');
    // Stream order and duplicates do not make a definition different.
    await call('PUT', 'subscriptions/t', { ...hook, streams: ['b', 'a'] });
    expect((await call('PUT', 'subscriptions/t', { ...hook, streams: ['a', 'b', 'a'] })).status).toBe(200);
  });

  test.each([
    ['a body that is not JSON', '{nope'],
    ['a body that is not an object', '[1]'],
    ['no type', { pattern: 'a/*', webhook: { url: 'http://127.0.0.1/h' } }],
    ['an unknown type', { type: 'email', pattern: 'a/*' }],
    ['neither pattern nor streams', { type: 'webhook', webhook: { url: 'http://127.0.0.1/h' } }],
    ['a stream under __ds', { type: 'webhook', streams: ['__ds/x'], webhook: { url: 'http://127.0.0.1/h' } }],
    ['a lease under 1 s', { ...hook, lease_ttl_ms: 999 }],
    ['a lease over 10 min', { ...hook, lease_ttl_ms: 600_001 }],
    ['a fractional lease', { ...hook, lease_ttl_ms: 1500.5 }],
    ['a webhook without url', { type: 'webhook', pattern: 'a/*', webhook: {} }],
    ['a pull-wake without wake_stream', { type: 'pull-wake', pattern: 'a/*' }],
    ['a description that is not a string', { ...hook, description: 5 }],
  ])('a PUT with %s is 400 INVALID_REQUEST', async (_what, body) => {
    const { call } = start();
    const res = await call('PUT', 'subscriptions/s', body);
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({ code: 'INVALID_REQUEST', message: expect.any(String) });
  });

  test('a subscription id with percent-encoding is decoded, and its callback URL encodes it again', async () => {
    const { call } = start();
    const res = await call('PUT', 'subscriptions/a%20b', hook);
    expect(res.status).toBe(201);
    expect(res.json.id).toBe('a b');
    expect((await call('GET', 'subscriptions/a%20b')).status).toBe(200);
    expect((await call('GET', 'subscriptions/%E0%A4%A')).status).toBe(400);
  });

  test('requests to a subscription that does not exist are 404 SUBSCRIPTION_NOT_FOUND', async () => {
    const { call } = start();
    const attempts: Array<[string, string, unknown]> = [
      ['GET', 'subscriptions/none', undefined],
      ['DELETE', 'subscriptions/none', undefined],
      ['POST', 'subscriptions/none/streams', { streams: ['a'] }],
      ['DELETE', 'subscriptions/none/streams/a', undefined],
      ['POST', 'subscriptions/none/claim', { worker: 'w' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, body);
      expect([method, path, res.status, res.json.error.code]).toEqual([method, path, 404, 'SUBSCRIPTION_NOT_FOUND']);
    }
    const callback = await call('POST', 'subscriptions/none/callback', {}, { authorization: 'Bearer x.y' });
    expect(callback.status).toBe(404);
  });

  test('POST streams needs a non-empty list of stream paths: 400 INVALID_REQUEST otherwise', async () => {
    const { call } = start();
    await call('PUT', 'subscriptions/s', hook);
    for (const body of [{}, { streams: [] }, { streams: [''] }, { streams: 'a' }, { streams: [3] }]) {
      const res = await call('POST', 'subscriptions/s/streams', body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });

  test('unknown __ds paths are 404 NOT_FOUND and wrong methods 405 with Allow', async () => {
    const { call } = start();
    for (const path of ['', 'nothing', 'subscriptions', 'subscriptions/', 'subscriptions/s/other', 'subscriptions/s/claim/x']) {
      const res = await call('GET', path);
      expect([path, res.status, res.json.error.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    const cases: Array<[string, string, string]> = [
      ['POST', 'jwks.json', 'GET, HEAD'],
      ['POST', 'subscriptions/s', 'GET, PUT, DELETE'],
      ['GET', 'subscriptions/s/streams', 'POST'],
      ['GET', 'subscriptions/s/streams/a', 'DELETE'],
      ['GET', 'subscriptions/s/claim', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(method, path);
      expect([method, path, res.status, res.headers.allow, res.json.error.code]).toEqual([method, path, 405, allow, 'METHOD_NOT_ALLOWED']);
    }
  });

  test('the JWKS names the stream base URL it was asked through, with or without a trailing slash', async () => {
    const { subs } = start();
    const put = (base: string) =>
      subs.handle({ method: 'PUT', subpath: 'subscriptions/s', headers: {}, body: Buffer.from(JSON.stringify(hook)), streamBaseUrl: base });
    const res = await put(BASE.slice(0, -1));
    expect(JSON.parse(res.body.toString()).webhook.signing.jwks_url).toBe(`${BASE}__ds/jwks.json`);
  });

  test('after close every request is 503 SHUTTING_DOWN', async () => {
    const { subs, call } = start();
    await subs.close();
    const res = await call('GET', 'jwks.json');
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('SHUTTING_DOWN');
  });
});
