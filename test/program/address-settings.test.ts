/**
 * Every program's address settings go through the one host:port parser: IPv6 in brackets is
 * accepted, an unbracketed IPv6 address and a port above 65535 are refused with the setting named.
 */
import { loadConfig } from '../../src/config';
import { loadCacheConfig } from '../../src/s3/config';
import { ConfigError, validateConfig } from '../../src/connect/config';

const svcErrors = (argv: string[]) => {
  const r = loadConfig(argv, {});
  return 'errors' in r ? r.errors : [];
};

describe('svc', () => {
  it('takes [::1]:port for every listener and refuses ports above 65535 in the optional ones too', () => {
    const r = loadConfig(['--listen', '[::1]:0', '--ds-listen', '[::1]:0', '--metrics-listen', '[::1]:0', '--kafka-advertised-listen', '[::1]:9092'], {});
    expect('config' in r && [r.config.listen, r.config.dsListen]).toEqual([{ host: '::1', port: 0 }, '[::1]:0']);
    expect(svcErrors(['--ds-listen', '127.0.0.1:70000'])).toEqual(['--ds-listen: must be empty or host:port with a port from 0 to 65535 (IPv6 as [::1]:port) (got "127.0.0.1:70000")']);
    expect(svcErrors(['--kafka-advertised-listen', '::1:9092'])).toEqual([expect.stringMatching(/^--kafka-advertised-listen: must be empty or host:port/)]);
  });
});

describe('svc-cache', () => {
  const env = { SVC_CACHE_ORIGIN_ENDPOINT: 'http://127.0.0.1:1' };
  it('takes [::1]:port and refuses an unbracketed IPv6 address or a port above 65535', () => {
    const r = loadCacheConfig([], { ...env, SVC_CACHE_SERVER_LISTEN: '[::1]:0' });
    expect('config' in r && r.config.server.listen).toBe('[::1]:0');
    const bad = loadCacheConfig([], { ...env, SVC_CACHE_SERVER_LISTEN: '::1:9000', SVC_CACHE_METRICS_LISTEN: '127.0.0.1:99999' });
    expect('errors' in bad && bad.errors).toEqual([
      'SVC_CACHE_SERVER_LISTEN: server.listen: must be host:port (got "::1:9000")',
      'SVC_CACHE_METRICS_LISTEN: metrics.listen: must be host:port (got "127.0.0.1:99999")',
    ]);
  });
});

describe('svc-connectors', () => {
  it('takes [::1]:port for the API and refuses an unbracketed IPv6 address', () => {
    expect(validateConfig({ http: { address: '[::1]:0' } }, 'config.toml').http.address).toBe('[::1]:0');
    let err: unknown;
    try {
      validateConfig({ http: { address: '::1:8081' } }, 'config.toml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).errors).toEqual(['config.toml: http.address: expected host:port with a port from 0 to 65535 (IPv6 as [::1]:port), got "::1:8081"']);
  });
});
