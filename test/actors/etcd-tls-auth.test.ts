/**
 * The metadata store over TLS with etcd authentication (docs/config.md, "Metadata on etcd"): a
 * Debian etcd-server member serving clients over TLS only, asking for a client certificate and with
 * `auth enable`; certificates made with openssl. The right CA, certificate and password open the
 * store, and writes (the transaction channel, with its token) and the watch (the etcd3 client) work;
 * each wrong one is refused at once with an EtcdAccessError naming it, not after a deadline.
 */
import * as fs from 'node:fs';
import { EtcdAccessError, type EtcdCredentials, type MetaStore, openMetaStore } from '../../src/actors';
import { EtcdCluster } from '../helpers/etcd-cluster';

jest.setTimeout(90_000);

let etcd: EtcdCluster;
const USER = 'svc';
const PASSWORD = 'pw-' + Math.random().toString(36).slice(2);

beforeAll(async () => {
  etcd = await EtcdCluster.start(1, { tls: true });
  etcd.enableAuth(USER, PASSWORD);
}, 90_000);
afterAll(async () => {
  await etcd?.stop();
});

const good = (): EtcdCredentials => ({
  ca: fs.readFileSync(etcd.tls!.ca),
  cert: fs.readFileSync(etcd.tls!.clientCert),
  key: fs.readFileSync(etcd.tls!.clientKey),
  user: USER,
  password: PASSWORD,
});

async function refused(credentials: EtcdCredentials, url = etcd.url('tls')): Promise<{ err: Error; ms: number }> {
  const t0 = Date.now();
  let store: MetaStore | null = null;
  try {
    store = await openMetaStore(url, '', { credentials });
  } catch (err) {
    if (process.env.SHOW_MESSAGES) console.log((err as Error).message);
    return { err: err as Error, ms: Date.now() - t0 };
  } finally {
    await store?.close();
  }
  throw new Error('the store opened');
}

test('the right CA, client certificate and password: writes, reads and a second store sees them', async () => {
  const a = await openMetaStore(etcd.url('tls'), '', { credentials: good() });
  const b = await openMetaStore(etcd.url('tls'), '', { credentials: good() });
  try {
    const rec = await a.put('greeting', { hello: 'world' });
    expect(rec.value).toEqual({ hello: 'world' });
    // b follows a's write through its watch (etcd3 client, TLS and token).
    const end = Date.now() + 20_000;
    while (b.get('greeting') === null && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(b.get('greeting')?.value).toEqual({ hello: 'world' });
    await b.put('greeting', { hello: 'again' }, { version: rec.version });
  } finally {
    await a.close();
    await b.close();
  }
});

test('a wrong password is refused at once, naming the user', async () => {
  const { err, ms } = await refused({ ...good(), password: 'wrong' });
  expect(err.message).toMatch(/refused the user or password/);
  expect(err.message).toContain(USER);
  expect(ms).toBeLessThan(5_000);
});

test('no user while etcd has authentication on: the message says to give one', async () => {
  const { user: _u, password: _p, ...noUser } = good();
  const { err } = await refused(noUser);
  // etcd takes the client certificate's CN as the user then: svc-client is not one.
  expect(err.message).toMatch(/give --metadata-user and --metadata-password/);
});

test('a CA that did not sign the members\' certificate is refused at once', async () => {
  const { err, ms } = await refused({ ...good(), ca: fs.readFileSync(etcd.tls!.otherCa) });
  expect(err.message).toMatch(/certificate is not trusted \(--metadata-ca\)/);
  expect(ms).toBeLessThan(5_000);
});

test('a client certificate the members do not trust is refused at once', async () => {
  const { err, ms } = await refused({ ...good(), cert: fs.readFileSync(etcd.tls!.otherCert), key: fs.readFileSync(etcd.tls!.otherKey) });
  expect(err.message).toMatch(/client certificate/);
  expect(ms).toBeLessThan(5_000);
});

test('etcd:// (plaintext) to a TLS member does not hang past the deadline', async () => {
  const { err } = await refused({ user: USER, password: PASSWORD }, etcd.url('tls').replace('etcds://', 'etcd://'));
  expect(err).toBeInstanceOf(Error);
});

test('EtcdAccessError is what a refusal is', async () => {
  const { err } = await refused({ ...good(), password: 'wrong' });
  expect((err as Error & { cause?: unknown }).cause).toBeInstanceOf(EtcdAccessError);
});
