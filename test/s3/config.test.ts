import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cacheConfig, loadCacheConfig, policyFor } from '../../src/s3/config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;

function tomlFile(text: string): string {
  const file = path.join(dir, `cache-${files++}.toml`);
  fs.writeFileSync(file, text);
  return file;
}

describe('svc-cache configuration', () => {
  it('fills every default around the one required key', () => {
    const r = loadCacheConfig([], { SVC_CACHE_ORIGIN_ENDPOINT: 'http://127.0.0.1:1' });
    if (!('config' in r)) throw new Error(r.errors.join('\n'));
    expect(r.config.server.listen).toBe('127.0.0.1:9000');
    expect(r.config.populate_max).toBe(16 * 1024 * 1024);
    expect(r.config.auth.mode).toBe('anonymous');
    expect(r.config.server.addressing.style).toBe('path');
    expect(r.config.buckets.ttl_seconds).toBe(300);
    expect(r.config.buckets.stale_if_error_seconds).toBe(3600);
  });

  it('takes stale_if_error_seconds from the environment and per bucket from the file', () => {
    const file = tomlFile(`
[origin]
endpoint = "http://127.0.0.1:1"
[buckets.override.live]
stale_if_error_seconds = 0
`);
    const r = loadCacheConfig(['--config', file], { SVC_CACHE_BUCKETS_STALE_IF_ERROR_SECONDS: '120' });
    if (!('config' in r)) throw new Error(r.errors.join('\n'));
    expect(policyFor(r.config, 'other').stale_if_error_seconds).toBe(120);
    expect(policyFor(r.config, 'live').stale_if_error_seconds).toBe(0);
    const bad = loadCacheConfig([], { SVC_CACHE_ORIGIN_ENDPOINT: 'http://127.0.0.1:1', SVC_CACHE_BUCKETS_STALE_IF_ERROR_SECONDS: '-1' });
    expect('errors' in bad && bad.errors.join('\n')).toMatch(/stale_if_error_seconds/i);
  });

  it('reads the TOML file and lets the environment override it', () => {
    const file = tomlFile(`
populate_max = 1024
[server]
listen = "0.0.0.0:9100"
addressing = { style = "virtual_hosted", domain = "s3.example.test" }
[origin]
endpoint = "https://origin.example.test"
virtual_hosted = true
[auth]
mode = "static"
access_key_id = "AK"
secret_access_key = "SK"
[buckets]
ttl_seconds = 60
[buckets.override.logs]
cache = false
`);
    const r = loadCacheConfig(['--config', file], { SVC_CACHE_POPULATE_MAX: '2048', SVC_CACHE_ORIGIN_VIRTUAL_HOSTED: 'false' });
    if (!('config' in r)) throw new Error(r.errors.join('\n'));
    expect(r.config.populate_max).toBe(2048);
    expect(r.config.origin.virtual_hosted).toBe(false);
    expect(r.config.server.addressing).toEqual({ style: 'virtual_hosted', domain: 's3.example.test' });
    expect(policyFor(r.config, 'logs')).toEqual({ cache: false, ttl_seconds: 60, stale_if_error_seconds: 3600, max_object_bytes: 64 * 1024 * 1024 });
    expect(policyFor(r.config, 'other').cache).toBe(true);
  });

  it('reports every error at once, each naming its source', () => {
    const file = tomlFile(`
colour = "blue"
[server]
listen = "nowhere"
[auth]
mode = "static"
`);
    const r = loadCacheConfig(['--config', file], { SVC_CACHE_POPULATE_MAX: 'lots', SVC_CACHE_ORIGIN_ENDPOINT: 'ftp://x' });
    expect('errors' in r).toBe(true);
    const errors = 'errors' in r ? r.errors : [];
    expect(errors.some((e) => e.includes('colour') && e.includes('unknown key'))).toBe(true);
    expect(errors.some((e) => e.startsWith('SVC_CACHE_POPULATE_MAX') && e.includes('populate_max'))).toBe(true);
    const second = loadCacheConfig(['--config', tomlFile('[server]\nlisten = "nowhere"\n[auth]\nmode = "static"\n')], { SVC_CACHE_ORIGIN_ENDPOINT: 'ftp://x' });
    const e2 = 'errors' in second ? second.errors : [];
    expect(e2.some((e) => e.includes('server.listen'))).toBe(true);
    expect(e2.some((e) => e.includes('auth: mode = "static"'))).toBe(true);
    expect(e2.some((e) => e.startsWith('SVC_CACHE_ORIGIN_ENDPOINT') && e.includes('http://'))).toBe(true);
  });

  it('reports a type error and a bad listen address in one pass, not one after the other', () => {
    const file = tomlFile('populate_max = "lots"\n[server]\nlisten = "nowhere"\n');
    const r = loadCacheConfig(['--config', file], { SVC_CACHE_ORIGIN_ENDPOINT: 'ftp://x' });
    const errors = 'errors' in r ? r.errors : [];
    expect(errors.some((e) => e.includes('populate_max'))).toBe(true);
    expect(errors.some((e) => e.includes('server.listen') && e.includes('host:port'))).toBe(true);
    expect(errors.some((e) => e.startsWith('SVC_CACHE_ORIGIN_ENDPOINT') && e.includes('http://'))).toBe(true);
  });

  it('reports an unreadable file and an unknown argument', () => {
    const r = loadCacheConfig(['--config', '/nonexistent/cache.toml', '--nope'], {});
    expect('errors' in r && r.errors.length).toBe(3);
  });

  it('builds a full config from a partial one for embedding', () => {
    const c = cacheConfig({ origin: { endpoint: 'http://o' }, cache: { memory_bytes: 1 } });
    expect(c.cache.memory_bytes).toBe(1);
    expect(c.cache.disk_bytes).toBe(10 * 1024 ** 3);
  });
});
