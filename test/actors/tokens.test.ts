/**
 * Tokens over the embedded metadata store: the wire form, what is stored (a hash, never the
 * secret), expiry on the store's clock, the anonymous token, and the races the admin API answers
 * with 409.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MetaStore, ROOT_SCOPE, Tokens, openLocalMetaStore } from '../../src/actors';
import { SvcError } from '../../src/errors';

const dirs: string[] = [];
const stores: MetaStore[] = [];
const ROOT_PRINCIPAL = { id: 'root', scope: ROOT_SCOPE };
const READ_A = { streams: [{ prefix: '/a/' }], ops: ['read' as const], audiences: ['svc' as const], groups: { stream: { read: true, write: false } } };

async function open(): Promise<{ dir: string; meta: MetaStore }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tokens-'));
  dirs.push(dir);
  const meta = await openLocalMetaStore(dir);
  stores.push(meta);
  return { dir, meta };
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The SvcError code a promise rejects with. */
async function code(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof SvcError)) throw new Error(`expected an SvcError, got ${String(e)}`);
  return e.code;
}

describe('Tokens', () => {
  it('issues BASE64URL(id).BASE64URL(32 bytes) without padding and stores only a hash of the secret', async () => {
    const { dir, meta } = await open();
    const tokens = new Tokens(meta);
    const issued = await tokens.issue(ROOT_PRINCIPAL, { id: 'reader.1', scope: READ_A });
    const [idPart, secretPart] = issued.token.split('.');
    expect(idPart).toBe(Buffer.from('reader.1').toString('base64url'));
    expect(secretPart).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secretPart!, 'base64url')).toHaveLength(32);
    await meta.close();
    // Neither the secret (in any usual encoding) nor the wire token is anywhere in the files.
    const secret = Buffer.from(secretPart!, 'base64url');
    const files = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f)));
    for (const bytes of files) {
      expect(bytes.includes(secret)).toBe(false);
      for (const enc of ['base64url', 'base64', 'hex'] as const) expect(bytes.includes(Buffer.from(secret.toString(enc)))).toBe(false);
    }
    expect(files.some((b) => b.includes(Buffer.from('"reader.1"')))).toBe(true);
  });

  it('answers absent, malformed, unknown and expired apart', async () => {
    const { meta } = await open();
    let now = 1_000_000;
    const tokens = new Tokens(meta, () => now);
    const t = await tokens.issue(ROOT_PRINCIPAL, { id: 'short', scope: { ...READ_A, expiresAtMs: 1_000_500 } });
    expect(await tokens.authenticate(undefined)).toBe('absent');
    expect(await tokens.authenticate('Bearer')).toBe('malformed');
    expect(await tokens.authenticate(`Token ${t.token}`)).toBe('malformed');
    expect(await tokens.authenticate(`Bearer ${t.token}=`)).toBe('malformed');
    expect(await tokens.authenticate(`Bearer ${t.token.split('.')[0]!}.${randomBytes(32).toString('base64url')}`)).toBe('unknown');
    expect(await tokens.authenticate(`bearer ${t.token}`)).toEqual({ id: 'short', scope: { ...READ_A, expiresAtMs: 1_000_500 } });
    // The synchronous form gives the same answers on the local store.
    expect(tokens.authenticateNow(`Bearer ${t.token}`)).toEqual({ id: 'short', scope: { ...READ_A, expiresAtMs: 1_000_500 } });
    expect(tokens.authenticateNow(undefined)).toBe('absent');
    expect(tokens.authenticateNow('Bearer x')).toBe('malformed');
    now = 1_000_500;
    expect(await tokens.authenticate(`Bearer ${t.token}`)).toBe('expired');
  });

  it('checks a token seen before against its record as it is now: revoked, replaced, forged or expired', async () => {
    const { meta } = await open();
    let now = 1_000_000;
    const tokens = new Tokens(meta, () => now);
    const first = await tokens.issue(ROOT_PRINCIPAL, { id: 'x', scope: { ...READ_A, expiresAtMs: 2_000_000 } });
    // Twice: the second answer comes from the tokens already verified.
    for (let i = 0; i < 2; i++) expect(await tokens.authenticate(`Bearer ${first.token}`)).toEqual(expect.objectContaining({ id: 'x' }));
    const forged = `${first.token.split('.')[0]!}.${randomBytes(32).toString('base64url')}`;
    expect(await tokens.authenticate(`Bearer ${forged}`)).toBe('unknown');
    expect(await tokens.authenticate(`Bearer ${first.token}`)).toEqual(expect.objectContaining({ id: 'x' }));
    now = 2_000_000;
    expect(await tokens.authenticate(`Bearer ${first.token}`)).toBe('expired');
    now = 1_000_000;
    await tokens.revoke(ROOT_PRINCIPAL, 'x');
    expect(await tokens.authenticate(`Bearer ${first.token}`)).toBe('unknown');
    // A new token under the same id: only the new secret is let in.
    const second = await tokens.issue(ROOT_PRINCIPAL, { id: 'x', scope: READ_A });
    expect(await tokens.authenticate(`Bearer ${second.token}`)).toEqual({ id: 'x', scope: READ_A });
    expect(await tokens.authenticate(`Bearer ${first.token}`)).toBe('unknown');
    expect(await tokens.authenticate(`Bearer ${second.token}`)).toEqual({ id: 'x', scope: READ_A });
  });

  it('applies the anonymous scope to requests without a credential, never with the admin audience', async () => {
    const { meta } = await open();
    const tokens = new Tokens(meta);
    expect(await code(tokens.issue(ROOT_PRINCIPAL, { id: 'anonymous', scope: { ...READ_A, audiences: ['svc', 'admin'] } }))).toBe('bad_request');
    await tokens.issue(ROOT_PRINCIPAL, { id: 'anonymous', scope: READ_A });
    expect(await tokens.authenticate(undefined)).toEqual({ id: 'anonymous', scope: READ_A });
    await tokens.revoke(ROOT_PRINCIPAL, 'anonymous');
    expect(await tokens.authenticate(undefined)).toBe('absent');
  });

  it('lets one of two revokes of a token made at once win; the other is a conflict', async () => {
    const { meta } = await open();
    const tokens = new Tokens(meta);
    await tokens.issue(ROOT_PRINCIPAL, { id: 'x', scope: READ_A });
    const results = await Promise.allSettled([tokens.revoke(ROOT_PRINCIPAL, 'x'), tokens.revoke(ROOT_PRINCIPAL, 'x')]);
    expect(results[0]!.status).toBe('fulfilled');
    expect(results[1]).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: 'conflict', message: 'token x changed concurrently' }) });
    expect(await code(tokens.revoke(ROOT_PRINCIPAL, 'x'))).toBe('not_found');
  });

  it('lets one of two issues of an id made at once win; the other is a conflict', async () => {
    const { meta } = await open();
    const tokens = new Tokens(meta);
    const results = await Promise.allSettled([tokens.issue(ROOT_PRINCIPAL, { id: 'x', scope: READ_A }), tokens.issue(ROOT_PRINCIPAL, { id: 'x', scope: READ_A })]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(expect.objectContaining({ code: 'conflict' }));
  });

  it('bootstraps the same token from two callers at once (two nodes starting together)', async () => {
    const { meta } = await open();
    const root = `${Buffer.from('root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    await expect(Promise.all([new Tokens(meta).bootstrap(root), new Tokens(meta).bootstrap(root)])).resolves.toEqual(['root', 'root']);
    expect(meta.list('tokens/')).toHaveLength(1);
  });

  it('gives a bootstrap record written by an older version today\'s root scope (the schema registry\'s audience and operations)', async () => {
    const { meta } = await open();
    const root = `${Buffer.from('root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    await new Tokens(meta).bootstrap(root);
    // As an older version stored it: without the schemas group, the schema_registry audience and the schema_* ops.
    const rec = meta.get<{ scope: typeof ROOT_SCOPE }>('tokens/root')!;
    const old = { ...ROOT_SCOPE, ops: ROOT_SCOPE.ops!.filter((o) => !o.startsWith('schema_')), audiences: ROOT_SCOPE.audiences!.filter((a) => a !== 'schema_registry'), groups: { stream: ROOT_SCOPE.groups!.stream!, tokens: ROOT_SCOPE.groups!.tokens!, admin: ROOT_SCOPE.groups!.admin! } };
    await meta.put('tokens/root', { ...rec.value, scope: old }, { version: rec.version });
    const tokens = new Tokens(meta);
    expect((await tokens.authenticate(`Bearer ${root}`)) as { scope: unknown }).toMatchObject({ scope: old });
    await tokens.bootstrap(root);
    expect((await tokens.authenticate(`Bearer ${root}`)) as { scope: unknown }).toMatchObject({ scope: ROOT_SCOPE });
  });
});
