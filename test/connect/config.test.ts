/**
 * svc-connectors configuration: defaults, every environment override form, JSON-looking values,
 * every error of a bad config reported at once, definitions with per-connector overrides,
 * redaction of secrets, and the RUST_LOG level.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyTransforms, ConfigError, DefinitionError, levelFromEnv, loadConfig, loadDefinitions, parseEnvValue, redact, validateConfig } from '../../src/connect';
import { tempDir } from '../helpers/node-process';

function configFile(text: string): string {
  const dir = tempDir('svc-connect-cfg-');
  fs.writeFileSync(path.join(dir, 'config.toml'), text);
  return path.join(dir, 'config.toml');
}

describe('config.toml and environment overrides', () => {
  test('built-in defaults are the spec defaults', () => {
    const c = validateConfig({}, 'defaults');
    expect(c.kafka).toMatchObject({ bootstrap_servers: 'localhost:9092', client_id: 'svc-connectors', security_protocol: 'plaintext', properties: {} });
    expect(c.state).toMatchObject({ storage: 'file', path: 'local_state', http: { load_method: 'get', save_method: 'put', timeout: '5s', retry: { max_attempts: 4, initial_backoff: '200ms', max_backoff: '2s' } } });
    expect(c.connectors).toMatchObject({ config_type: 'local', config_dir: '/etc/svc-connectors/connectors' });
    expect(c.http).toMatchObject({ enabled: true, address: '127.0.0.1:8081', api_key: '', metrics: { enabled: false, endpoint: '/metrics' }, cors: { enabled: false }, tls: { enabled: false } });
    expect(c.logging.format).toBe('text');
    expect(c.telemetry.enabled).toBe(false);
  });

  test('SVC_CONNECTORS_<SECTION>__<KEY> overrides the file, nested sections joined by __, JSON-looking values parsed', () => {
    const file = configFile('[kafka]\nbootstrap_servers = "file:1"\nclient_id = "from-file"\n[http]\naddress = "127.0.0.1:9999"\n');
    const { config, overrides, path: p } = loadConfig({
      SVC_CONNECTORS_CONFIG_PATH: file,
      SVC_CONNECTORS_KAFKA__BOOTSTRAP_SERVERS: 'env:2',
      SVC_CONNECTORS_STATE__STORAGE: 'http',
      SVC_CONNECTORS_STATE__HTTP__URL: 'http://state.example/cp/',
      SVC_CONNECTORS_STATE__HTTP__RETRY__MAX_ATTEMPTS: '7',
      SVC_CONNECTORS_HTTP__METRICS__ENABLED: 'true',
      SVC_CONNECTORS_HTTP__CORS__ALLOWED_ORIGINS: '["https://a.example","https://b.example"]',
      SVC_CONNECTORS_KAFKA__PROPERTIES: '{"request_timeout_ms": 1000}',
      SVC_CONNECTORS_HTTP__API_KEY: '12345',
    });
    expect(p).toBe(file);
    expect(config.kafka.bootstrap_servers).toBe('env:2');
    expect(config.kafka.client_id).toBe('from-file');
    expect(config.http.address).toBe('127.0.0.1:9999');
    expect(config.state.storage).toBe('http');
    expect(config.state.http.url).toBe('http://state.example/cp/');
    expect(config.state.http.retry.max_attempts).toBe(7);
    expect(config.http.metrics.enabled).toBe(true);
    expect(config.http.cors.allowed_origins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.kafka.properties).toEqual({ request_timeout_ms: 1000 });
    // A number-looking API key is still the string the user typed.
    expect(config.http.api_key).toBe('12345');
    expect(overrides).toContain('SVC_CONNECTORS_KAFKA__BOOTSTRAP_SERVERS');
  });

  test('values that look like JSON are JSON; anything else is a string', () => {
    expect(parseEnvValue('true')).toBe(true);
    expect(parseEnvValue('42')).toBe(42);
    expect(parseEnvValue('-1.5')).toBe(-1.5);
    expect(parseEnvValue('[1,"a"]')).toEqual([1, 'a']);
    expect(parseEnvValue('{"a":1}')).toEqual({ a: 1 });
    expect(parseEnvValue('localhost:9092')).toBe('localhost:9092');
    expect(parseEnvValue('[not json')).toBe('[not json');
  });

  test('a bad config reports every error at once, each with where it came from', () => {
    const file = configFile('[kafka]\nsecurity_protocol = "carrier-pigeon"\nbogus = 1\n[state.http]\ntimeout = "soon"\n[http.metrics]\nenabled = "maybe"\n');
    let err: unknown;
    try {
      loadConfig({ SVC_CONNECTORS_CONFIG_PATH: file, SVC_CONNECTORS_LOGGING__FORMAT: 'xml' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const errors = (err as ConfigError).errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/config\.toml: kafka\.security_protocol: /),
        expect.stringMatching(/config\.toml: kafka\.bogus: Unexpected property/),
        expect.stringMatching(/config\.toml: state\.http\.timeout: not a duration/),
        expect.stringMatching(/config\.toml: http\.metrics\.enabled: Expected boolean/),
        expect.stringMatching(/logging\.format: .*\(from SVC_CONNECTORS_LOGGING__FORMAT\)/),
      ]),
    );
    expect(errors).toHaveLength(5);
  });

  test('an unreadable config file and invalid TOML are reported with the path', () => {
    expect(() => loadConfig({ SVC_CONNECTORS_CONFIG_PATH: '/nonexistent/config.toml' })).toThrow(/\/nonexistent\/config\.toml: ENOENT/);
    const bad = configFile('[kafka\n');
    expect(() => loadConfig({ SVC_CONNECTORS_CONFIG_PATH: bad })).toThrow(/invalid TOML at line 1/);
  });

  test('secrets are redacted wherever config is shown', () => {
    const c = validateConfig({ kafka: { security_protocol: 'sasl_plaintext', sasl: { username: 'u', password: 'hunter2' } }, http: { api_key: 'k' } }, 'x');
    const shown = JSON.stringify(redact(c));
    expect(shown).not.toContain('hunter2');
    expect(shown).toContain('"password":"***"');
    expect(shown).toContain('"api_key":"***"');
    expect(redact({ connection_string: 'postgres://app:s3cret@db/x' })).toEqual({ connection_string: 'postgres://app:***@db/x' });
  });

  test('the log level comes from RUST_LOG (directives understood), SVC_CONNECTORS_LOG as alias, default info', () => {
    expect(levelFromEnv({})).toBe('info');
    expect(levelFromEnv({ RUST_LOG: 'debug' })).toBe('debug');
    expect(levelFromEnv({ RUST_LOG: 'warn,svc_connectors=debug' })).toBe('debug');
    expect(levelFromEnv({ RUST_LOG: 'hyper=trace,error' })).toBe('error');
    expect(levelFromEnv({ SVC_CONNECTORS_LOG: 'warn' })).toBe('warn');
    expect(levelFromEnv({ RUST_LOG: 'error', SVC_CONNECTORS_LOG: 'warn' })).toBe('error');
  });
});

describe('connector definitions', () => {
  const write = (files: Record<string, string>): string => {
    const dir = tempDir('svc-connect-defs-');
    for (const [n, t] of Object.entries(files)) fs.writeFileSync(path.join(dir, n), t);
    return dir;
  };

  test('per-connector overrides: top-level fields, plugin_config fields (nested with __), keys with punctuation, and no bleeding into a longer key', () => {
    const dir = write({
      'a.toml': 'type = "sink"\nkey = "pg-main"\npath = "libsvc_connector_stdout_sink"\n[[topics]]\nnames = ["t"]\n[plugin_config]\nformat = "value"\n',
      'b.toml': 'type = "sink"\nkey = "pg-main_2"\npath = "libsvc_connector_stdout_sink"\n[[topics]]\nnames = ["t"]\n',
      'c.toml': 'type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "t"\n',
    });
    const defs = loadDefinitions(dir, {
      SVC_CONNECTORS_SINK_PG_MAIN_ENABLED: 'false',
      SVC_CONNECTORS_SINK_PG_MAIN_PLUGIN_CONFIG_FORMAT: 'json',
      SVC_CONNECTORS_SINK_PG_MAIN_PLUGIN_CONFIG_POOL__SIZE: '8',
      SVC_CONNECTORS_SINK_PG_MAIN_2_VERSION: '3',
      SVC_CONNECTORS_SOURCE_GEN_PLUGIN_CONFIG_RATE: '250',
      SVC_CONNECTORS_SOURCE_GEN_BATCH__MAX_RECORDS: '50',
    });
    const a = defs.get('sink:pg-main')!;
    expect(a.versions.get(a.active)!.definition).toMatchObject({ enabled: false, version: 0, plugin_config: { format: 'json', pool: { size: 8 } } });
    const b = defs.get('sink:pg-main_2')!;
    expect(b.active).toBe(3);
    expect(b.versions.get(3)!.definition.enabled).toBe(true);
    const c = defs.get('source:gen')!.versions.get(0)!.definition;
    expect(c.plugin_config).toEqual({ rate: 250 });
    expect(c.batch.max_records).toBe(50);
    // The default batch, chosen by measurement (perf/connect/RESULTS.md): one fdatasync and one
    // commit per 5000 records keeps the file sink at the bare consumer's pace.
    expect(a.versions.get(a.active)!.definition.batch).toEqual({ max_records: 5000, poll_interval: '100ms' });
  });

  test('every problem of every definition file is reported together', () => {
    const dir = write({
      'a.toml': 'type = "sink"\nkey = "a"\npath = "x"\n',
      'b.toml': 'type = "source"\nkey = "b"\npath = "x"\nenabled = "perhaps"\n[[topics]]\nname = "t"\n',
      'c.toml': 'type = "sink"\nkey = "c"\npath = "x"\n[[topics]]\nnames = ["t"]\n[error]\ntolerance = "dlq"\n',
      'd.toml': 'not toml at all [',
    });
    let err: unknown;
    try {
      loadDefinitions(dir, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DefinitionError);
    const errors = (err as DefinitionError).errors;
    expect(errors).toHaveLength(4);
    expect(errors).toEqual(expect.arrayContaining([
      expect.stringMatching(/a\.toml: topics: a sink needs at least one \[\[topics\]\] block/),
      expect.stringMatching(/b\.toml: enabled: Expected boolean/),
      expect.stringMatching(/c\.toml: error\.dlq_topic: required when error\.tolerance = "dlq"/),
      expect.stringMatching(/d\.toml: invalid TOML/),
    ]));
  });
});

describe('transforms', () => {
  const t = (ts: Parameters<typeof applyTransforms>[0], v: unknown): unknown => {
    const r = applyTransforms(ts, Buffer.from(JSON.stringify(v)));
    return r === null ? null : JSON.parse(r.toString());
  };
  test('add, delete, update, rename and filter JSON fields in order; non-JSON passes unchanged', () => {
    expect(t([{ type: 'add_fields', fields: { env: 'prod', a: 9 } }], { a: 1 })).toEqual({ a: 1, env: 'prod' });
    expect(t([{ type: 'delete_fields', fields: ['secret'] }], { a: 1, secret: 'x' })).toEqual({ a: 1 });
    expect(t([{ type: 'update_fields', fields: { a: 2, b: 3 } }], { a: 1 })).toEqual({ a: 2 });
    expect(t([{ type: 'rename_fields', fields: { a: 'b' } }], { a: 1 })).toEqual({ b: 1 });
    expect(t([{ type: 'filter', field: 'level', equals: ['error'], action: 'keep' }], { level: 'info' })).toBeNull();
    expect(t([{ type: 'filter', field: 'level', equals: ['error'], action: 'keep' }], { level: 'error' })).toEqual({ level: 'error' });
    expect(t([{ type: 'filter', field: 'debug', exists: true, action: 'drop' }], { debug: 1 })).toBeNull();
    expect(applyTransforms([{ type: 'delete_fields', fields: ['a'] }], Buffer.from('plain text'))!.toString()).toBe('plain text');
  });
});
