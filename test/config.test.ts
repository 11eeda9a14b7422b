import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONFIG_FIELDS, configWarnings, defaultGatewayThreads, dsListenAddress, isLoopback, kafkaAdvertisedAddress, loadConfig, otlpTracesEndpointOf, type Config } from '../src/config';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes a TOML file into the test's temp directory and returns its path. */
function toml(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function ok(argv: string[], env: NodeJS.ProcessEnv = {}): Config {
  const result = loadConfig(argv, env);
  if ('errors' in result) throw new Error(`unexpected errors:\n${result.errors.join('\n')}`);
  return result.config;
}

function errors(argv: string[], env: NodeJS.ProcessEnv = {}): string[] {
  const result = loadConfig(argv, env);
  if (!('errors' in result)) throw new Error('expected errors, got a config');
  return result.errors;
}

describe('defaults', () => {
  it('--gateway-threads defaults from the cores: 1 below 4, half of them from 4 up, at most 16', () => {
    expect([1, 2, 3, 4, 5, 8, 16, 32, 64].map(defaultGatewayThreads)).toEqual([1, 1, 1, 2, 2, 4, 8, 16, 16]);
  });

  it('gives the embedded defaults with no flags, environment or file', () => {
    expect(ok([])).toEqual({
      listen: { host: '127.0.0.1', port: 4437 },
      protocol: 'svc',
      dsListen: '',
      schemaRegistryListen: '',
      sseReconnectMs: 60_000,
      sseThreads: 0,
      gatewayThreads: defaultGatewayThreads(os.availableParallelism()),
      corsOrigins: '*',
      dsSubscriptions: true,
      durability: 'sync',
      adminListen: { host: '127.0.0.1', port: 9090 },
      metrics: true,
      metricsListen: '',
      otlpTracesEndpoint: '',
      otlpTracesSampleRatio: 1,
      otlpServiceName: 'svc',
      kafkaListen: { host: '127.0.0.1', port: 9092 },
      kafkaAdvertisedListen: '',
      kafkaGroupConsumerHeartbeatIntervalMs: 5000,
      kafkaGroupConsumerSessionTimeoutMs: 45000,
      admin: true,
      auth: 'off',
      authBootstrapToken: '',
      authBootstrapTokenFile: '',
      insecureAllowRemote: false,
      dataDir: './data',
      metadata: 'local',
      metadataCa: '',
      metadataCert: '',
      metadataKey: '',
      metadataPassword: '',
      metadataPasswordFile: '',
      metadataUser: '',
      objects: '',
      objectsFlushMs: 2,
      objectsLedger: 'cluster',
      objectsPutsInFlight: 2,
      objectsCacheBytes: 256 * 1024 * 1024,
      objectsCompactBytesPerSecond: 0,
      objectsReads: 'remote',
      nodeId: 0,
      nodeLeaseTtl: 5,
      rebalance: 'auto',
      advertise: '',
      dsAdvertise: '',
      shards: 8,
      shardWorkers: Math.max(1, os.availableParallelism() - 1),
      httpEngine: 'uws',
      logLevel: 'info',
      logFormat: 'auto',
      shutdownTimeoutMs: 10_000,
      longPollTimeoutMs: 30_000,
      limits: {
        maxRecordBytes: 1024 * 1024,
        maxRequestBytes: 16 * 1024 * 1024,
        maxBatchRecords: 10_000,
        maxStreamNameBytes: 1024,
        readDefaultBytes: 1024 * 1024,
        readMaxBytes: 16 * 1024 * 1024,
        readDefaultCount: 1000,
        listMaxLimit: 1000,
      },
      storage: { segmentBytes: 64 * 1024 * 1024, retentionIntervalMs: 1000, reaperIntervalMs: 5000, reserveBytes: 64 * 1024 * 1024, indexCacheChunks: 16384, readCacheBytes: 64 * 1024 * 1024, readPoolBytes: 64 * 1024 * 1024 },
    });
  });

  it('derives the flag, environment and file names from the field path', () => {
    const f = CONFIG_FIELDS.find((x) => x.path.join('.') === 'limits.maxRecordBytes')!;
    expect([f.flag, f.env, f.tomlKey]).toEqual(['--max-record-bytes', 'SVC_MAX_RECORD_BYTES', 'limits.max_record_bytes']);
    const d = CONFIG_FIELDS.find((x) => x.path.join('.') === 'dataDir')!;
    expect([d.flag, d.env, d.tomlKey]).toEqual(['--data-dir', 'SVC_DATA_DIR', 'data_dir']);
  });

  it('names the long-poll timeout --long-poll-timeout, as the issue asked, while the field keeps its unit', () => {
    const f = CONFIG_FIELDS.find((x) => x.path.join('.') === 'longPollTimeoutMs')!;
    expect([f.flag, f.env, f.tomlKey]).toEqual(['--long-poll-timeout', 'SVC_LONG_POLL_TIMEOUT', 'long_poll_timeout']);
    expect(ok(['--long-poll-timeout', '2500']).longPollTimeoutMs).toBe(2500);
    expect(ok([], { SVC_LONG_POLL_TIMEOUT: '1000' }).longPollTimeoutMs).toBe(1000);
    expect(errors(['--long-poll-timeout', '0'])).toEqual(['--long-poll-timeout: must be an integer from 1 to 3600000 (got "0")']);
  });

  it('documents every flag, environment variable and file key in docs/config.md', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'config.md'), 'utf8');
    const missing = CONFIG_FIELDS.flatMap((f) => [f.flag, f.env, '`' + f.tomlKey.split('.').pop()! + '`']).filter((n) => !doc.includes(n));
    expect(missing).toEqual([]);
  });
});

describe('precedence', () => {
  it('takes flags over environment over config file over defaults', () => {
    const file = toml('prec.toml', 'data_dir = "from-file"\nshards = 4\nhttp_engine = "node"\n[limits]\nmax_record_bytes = 100\n');
    const config = ok(['--data-dir', 'from-flag'], { SVC_CONFIG: file, SVC_DATA_DIR: 'from-env', SVC_SHARDS: '5' });
    expect(config.dataDir).toBe('from-flag');
    expect(config.shards).toBe(5);
    expect(config.httpEngine).toBe('node');
    expect(config.limits.maxRecordBytes).toBe(100);
    expect(config.limits.maxRequestBytes).toBe(16 * 1024 * 1024);
  });

  it('prefers --config over SVC_CONFIG', () => {
    const a = toml('a.toml', 'shards = 2\n');
    const b = toml('b.toml', 'shards = 3\n');
    expect(ok(['--config', a], { SVC_CONFIG: b }).shards).toBe(2);
    expect(ok([`--config=${a}`]).shards).toBe(2);
  });

  it('accepts --flag=value and ignores empty environment variables', () => {
    const config = ok(['--listen=[::1]:0', '--shard-workers=3'], { SVC_DATA_DIR: '' });
    expect(config.listen).toEqual({ host: '::1', port: 0 });
    expect(config.shardWorkers).toBe(3);
    expect(config.dataDir).toBe('./data');
  });

  it('turns the admin listener off with --no-admin, SVC_ADMIN=false or admin = false', () => {
    expect(ok(['--no-admin']).admin).toBe(false);
    expect(ok([], { SVC_ADMIN: 'false' }).admin).toBe(false);
    expect(ok([], { SVC_ADMIN: '0' }).admin).toBe(false);
    expect(ok(['--admin'], { SVC_ADMIN: '0' }).admin).toBe(true);
    expect(ok(['--config', toml('noadmin.toml', 'admin = false\n')]).admin).toBe(false);
  });
});

describe('errors', () => {
  it('reports every error at once, each naming its source', () => {
    const file = toml('svc.toml', 'data_dir = 5\ncolour = "blue"\n[limits]\nmax_record_bytes = "big"\nmystery = 1\n');
    const errs = errors(
      ['--shard-workers', '0', '--bogus', '--listen', 'nohost', '--config', file],
      { SVC_SHARDS: '2000', SVC_HTTP_ENGINE: 'fast', SVC_ADMIN: 'yes' },
    );
    const label = `config file ${file}`;
    expect(errs).toEqual(expect.arrayContaining([
      '--bogus: unknown flag (svc serve --help lists them)',
      `${label}: colour: unknown key`,
      `${label}: limits.mystery: unknown key`,
      `${label}: data_dir: must be a non-empty string (got 5)`,
      `${label}: limits.max_record_bytes: must be an integer >= 1 (got "big")`,
      'SVC_SHARDS: must be an integer from 1 to 1024 (got "2000")',
      'SVC_HTTP_ENGINE: must be one of uws, node (got "fast")',
      'SVC_ADMIN: must be true, false, 1 or 0 (got "yes")',
      '--shard-workers: must be an integer >= 1 (got "0")',
      expect.stringMatching(/^--listen: must be host:port/),
    ]));
    expect(errs).toHaveLength(10);
  });

  it('reports a bad value even when a higher-precedence source overrides it', () => {
    expect(errors(['--shards', '4'], { SVC_SHARDS: 'many' })).toEqual(['SVC_SHARDS: must be an integer from 1 to 1024 (got "many")']);
  });

  it('rejects ports outside 0..65535 and addresses without a port', () => {
    expect(errors(['--listen', '127.0.0.1:70000'])[0]).toMatch(/^--listen: must be host:port/);
    expect(errors(['--admin-listen', '127.0.0.1'])[0]).toMatch(/^--admin-listen: must be host:port/);
    expect(errors(['--listen', '::1:80'])[0]).toMatch(/^--listen: must be host:port.*\[::1\]:port/);
  });

  it('reports a missing flag value, a stray argument and a value given to --no-flag', () => {
    expect(errors(['extra', '--no-admin=1', '--data-dir'])).toEqual([
      'extra: unexpected argument',
      '--no-admin: takes no value',
      '--data-dir: missing value',
    ]);
  });

  it('takes auth required with a bootstrap token or its file, not both', () => {
    expect(ok(['--auth', 'required', '--auth-bootstrap-token', 'cm9vdA.x']).authBootstrapToken).toBe('cm9vdA.x');
    expect(ok(['--auth', 'required'], { SVC_AUTH_BOOTSTRAP_TOKEN_FILE: '/run/secrets/svc' }).authBootstrapTokenFile).toBe('/run/secrets/svc');
    expect(errors(['--auth-bootstrap-token', 'a.b', '--auth-bootstrap-token-file', 'f'])).toEqual(['--auth-bootstrap-token-file: give the bootstrap token or its file, not both']);
  });

  it('lets auth required bind beyond loopback', () => {
    expect(ok(['--auth', 'required', '--listen', '0.0.0.0:4437', '--admin-listen', '0.0.0.0:9090']).listen.host).toBe('0.0.0.0');
  });

  it('keeps defaults below their ceilings', () => {
    expect(errors([], { SVC_READ_DEFAULT_BYTES: '100', SVC_READ_MAX_BYTES: '10' })).toEqual([
      'SVC_READ_DEFAULT_BYTES: must not exceed --read-max-bytes (100 > 10)',
    ]);
  });
});

describe('the Kafka listener settings', () => {
  it('takes --kafka-listen and --kafka-advertised-listen', () => {
    const c = ok(['--kafka-listen', '127.0.0.1:0', '--kafka-advertised-listen', 'broker.example:19092']);
    expect([c.kafkaListen, kafkaAdvertisedAddress(c)]).toEqual([{ host: '127.0.0.1', port: 0 }, { host: 'broker.example', port: 19092 }]);
    expect(kafkaAdvertisedAddress(ok([]))).toBeNull();
    expect(errors(['--kafka-advertised-listen', 'nowhere'])[0]).toMatch(/^--kafka-advertised-listen: /);
  });

  it('holds --kafka-listen to the loopback rule while auth is off', () => {
    expect(errors(['--kafka-listen', '0.0.0.0:9092'])[0]).toMatch(/^--kafka-listen: 0\.0\.0\.0 is not a loopback address; auth is off/);
    expect(ok(['--kafka-listen', '0.0.0.0:9092', '--insecure-allow-remote']).kafkaListen).toEqual({ host: '0.0.0.0', port: 9092 });
    expect(errors(['--metrics-listen', '0.0.0.0:9100'])[0]).toMatch(/^--metrics-listen: 0\.0\.0\.0 is not a loopback address; auth is off/);
    expect(ok(['--metrics-listen', '127.0.0.1:9100']).metricsListen).toBe('127.0.0.1:9100');
  });
});

describe('the Durable Streams listener settings', () => {
  it('takes --protocol ds, a --ds-listen address and the SSE reconnect interval', () => {
    const c = ok(['--protocol', 'ds', '--ds-listen', '127.0.0.1:4438', '--sse-reconnect-ms', '5000', '--no-ds-subscriptions']);
    expect([c.protocol, dsListenAddress(c), c.sseReconnectMs, c.dsSubscriptions]).toEqual(['ds', { host: '127.0.0.1', port: 4438 }, 5000, false]);
    expect(dsListenAddress(ok([]))).toBeNull();
  });

  it('refuses a protocol it does not speak and a --ds-listen that is not host:port', () => {
    expect(errors(['--protocol', 'kafka'])).toEqual(['--protocol: must be one of svc, ds (got "kafka")']);
    expect(errors(['--ds-listen', 'nowhere'])).toHaveLength(1);
    expect(errors(['--ds-listen', 'nowhere'])[0]).toMatch(/^--ds-listen: /);
  });

  it('holds --ds-listen to the loopback rule while auth is off', () => {
    expect(errors(['--ds-listen', '0.0.0.0:4438'])[0]).toMatch(/^--ds-listen: 0\.0\.0\.0 is not a loopback address; auth is off/);
    expect(ok(['--ds-listen', '0.0.0.0:4438', '--insecure-allow-remote']).dsListen).toBe('0.0.0.0:4438');
  });
});

describe('the OpenTelemetry traces settings', () => {
  it('takes an endpoint, a sample ratio and a service name from flags or the environment', () => {
    const c = ok(['--otlp-traces-endpoint', 'http://127.0.0.1:4318/v1/traces', '--otlp-traces-sample-ratio', '0.25'], { SVC_OTLP_SERVICE_NAME: 'edge-a' });
    expect(c).toMatchObject({ otlpTracesEndpoint: 'http://127.0.0.1:4318/v1/traces', otlpTracesSampleRatio: 0.25, otlpServiceName: 'edge-a' });
    expect(otlpTracesEndpointOf(c, {})).toBe('http://127.0.0.1:4318/v1/traces');
  });

  it('refuses an endpoint that is not an http(s) URL and a ratio outside 0..1', () => {
    const e = errors(['--otlp-traces-endpoint', 'collector:4318', '--otlp-traces-sample-ratio', '1.5']);
    expect(e).toEqual(
      expect.arrayContaining([
        '--otlp-traces-endpoint: must be empty or an http:// or https:// URL (got "collector:4318")',
        '--otlp-traces-sample-ratio: must be a number from 0 to 1 (got "1.5")',
      ]),
    );
  });

  it('is off by default, and honours the standard OTEL_EXPORTER_OTLP_* variables when its own setting is empty', () => {
    const c = ok([]);
    expect(otlpTracesEndpointOf(c, {})).toBeNull();
    expect(otlpTracesEndpointOf(c, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/' })).toBe('http://otel:4318/v1/traces');
    expect(otlpTracesEndpointOf(c, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/x' })).toBe('http://t:4318/x');
    const own = ok(['--otlp-traces-endpoint', 'http://mine:4318/v1/traces']);
    expect(otlpTracesEndpointOf(own, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/x' })).toBe('http://mine:4318/v1/traces');
  });
});

describe('the loopback rule', () => {
  it('refuses a non-loopback listener while auth is off, saying why and how to override', () => {
    const [err, ...rest] = errors(['--listen', '0.0.0.0:0']);
    expect(rest).toEqual([]);
    expect(err).toMatch(/^--listen: 0\.0\.0\.0 is not a loopback address; auth is off/);
    expect(err).toContain('--insecure-allow-remote');
  });

  it('checks the admin listener too, unless it is disabled', () => {
    expect(errors([], { SVC_ADMIN_LISTEN: '10.1.2.3:9090' })[0]).toMatch(/^SVC_ADMIN_LISTEN: 10\.1\.2\.3 is not a loopback/);
    expect(ok(['--no-admin'], { SVC_ADMIN_LISTEN: '10.1.2.3:9090' }).admin).toBe(false);
  });

  it('is lifted by --insecure-allow-remote or SVC_INSECURE_ALLOW_REMOTE', () => {
    expect(ok(['--listen', '0.0.0.0:0', '--insecure-allow-remote']).listen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(ok(['--admin-listen', '[::]:0'], { SVC_INSECURE_ALLOW_REMOTE: 'true' }).adminListen).toEqual({ host: '::', port: 0 });
  });

  it('counts 127.0.0.0/8, ::1 and localhost as loopback', () => {
    for (const host of ['127.0.0.1', '127.9.8.7', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
      expect([host, isLoopback(host)]).toEqual([host, true]);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', 'localhost.example.com']) {
      expect([host, isLoopback(host)]).toEqual([host, false]);
    }
    expect(ok(['--listen', 'localhost:0', '--admin-listen', '[::1]:0']).listen.host).toBe('localhost');
  });
});

describe('the config file', () => {
  it('reads every field, with limits and storage as tables', () => {
    const file = toml('full.toml', [
      'listen = "127.0.0.2:5000"', 'admin_listen = "[::1]:0"', 'admin = true', 'data_dir = "/var/lib/svc"',
      'shards = 16', 'shard_workers = 2', 'http_engine = "node"', 'log_level = "debug"', 'shutdown_timeout_ms = 500',
      '[limits]', 'max_batch_records = 10', '[storage]', 'segment_bytes = 4096',
    ].join('\n'));
    const config = ok(['--config', file]);
    expect(config).toMatchObject({
      listen: { host: '127.0.0.2', port: 5000 }, adminListen: { host: '::1', port: 0 }, dataDir: '/var/lib/svc',
      shards: 16, shardWorkers: 2, httpEngine: 'node', logLevel: 'debug', shutdownTimeoutMs: 500,
      limits: { maxBatchRecords: 10 }, storage: { segmentBytes: 4096 },
    });
  });

  it('points a table key written at top level to its table, and wants tables to be tables', () => {
    const file = toml('misplaced.toml', 'max_record_bytes = 5\nstorage = 3\n');
    expect(errors(['--config', file])).toEqual([
      `config file ${file}: max_record_bytes: unknown key (it belongs in [limits])`,
      `config file ${file}: storage: must be a table ([storage])`,
    ]);
  });

  it('reports TOML syntax errors with their position and a missing file with its source', () => {
    const bad = toml('bad.toml', 'shards = 4\nlisten = \n');
    expect(errors(['--config', bad])).toEqual([expect.stringMatching(new RegExp(`^config file .*bad\\.toml: invalid TOML at line 2`))]);
    expect(errors([], { SVC_CONFIG: path.join(dir, 'absent.toml') })).toEqual([expect.stringMatching(/^SVC_CONFIG: cannot read config file .*absent\.toml: ENOENT/)]);
  });
});

describe('object store (--objects)', () => {
  const ETCD = 'etcd://127.0.0.1:2379/svc';
  it('takes file: and s3:// URLs from a flag, the environment or the file, with etcd metadata', () => {
    expect(ok(['--metadata', ETCD, '--objects', 'file:/srv/objects']).objects).toBe('file:/srv/objects');
    const creds = { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' };
    expect(ok(['--metadata', ETCD], { ...creds, SVC_OBJECTS: 's3://bkt/svc?endpoint=http://127.0.0.1:9000&region=eu-west-1' }).objects).toBe('s3://bkt/svc?endpoint=http://127.0.0.1:9000&region=eu-west-1');
    const file = toml('objects.toml', `metadata = "${ETCD}"\nobjects = "file:shared"\nobjects_flush_ms = 5\n`);
    expect(ok(['--config', file])).toMatchObject({ objects: 'file:shared', objectsFlushMs: 5 });
    expect(ok(['--objects-flush-ms', '20', '--metadata', ETCD, '--objects', 'file:x']).objectsFlushMs).toBe(20);
    expect(ok(['--objects-puts-in-flight', '8', '--metadata', ETCD, '--objects', 'file:x']).objectsPutsInFlight).toBe(8);
    expect(ok(['--objects-cache-bytes', '0', '--metadata', ETCD, '--objects', 'file:x']).objectsCacheBytes).toBe(0);
    expect(ok(['--objects-reads', 'copy', '--metadata', ETCD, '--objects', 'file:x']).objectsReads).toBe('copy');
    expect(ok(['--config', toml('objects-reads.toml', `objects_reads = "copy"\n`)]).objectsReads).toBe('copy');
    expect(ok(['--config', toml('objects-cache.toml', `objects_cache_bytes = 1048576\n`)]).objectsCacheBytes).toBe(1048576);
  });

  it('takes a bound on compaction\'s bytes per second: 0 for none, else at least 2 MiB/s', () => {
    expect(ok(['--objects-compact-bytes-per-second', '67108864', '--metadata', ETCD, '--objects', 'file:x']).objectsCompactBytesPerSecond).toBe(67108864);
    expect(ok(['--metadata', ETCD, '--objects', 'file:x'], { SVC_OBJECTS_COMPACT_BYTES_PER_SECOND: '0' }).objectsCompactBytesPerSecond).toBe(0);
    expect(ok(['--config', toml('objects-compact.toml', `objects_compact_bytes_per_second = 2097152\n`)]).objectsCompactBytesPerSecond).toBe(2097152);
    expect(errors(['--objects-compact-bytes-per-second', '1048576'])).toEqual([expect.stringMatching(/^--objects-compact-bytes-per-second: must be 0 \(no bound\) or at least 2097152 .*\(got 1048576\)$/)]);
    expect(errors(['--objects-compact-bytes-per-second', '-1'])).toEqual([expect.stringMatching(/^--objects-compact-bytes-per-second: must be an integer >= 0/)]);
  });

  it('refuses an s3:// store without credentials in the environment, naming the variables', () => {
    expect(errors(['--metadata', ETCD, '--objects', 's3://bkt/p'], { AWS_ACCESS_KEY_ID: 'AK' })).toEqual([
      '--objects: an s3:// store needs credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)',
    ]);
  });

  it('refuses --objects with local metadata, with the reason', () => {
    expect(errors(['--objects', 'file:/srv/objects'])).toEqual(['--objects: --objects needs --metadata etcd://…']);
    expect(errors([], { SVC_OBJECTS: 'file:/srv/objects' })).toEqual(['SVC_OBJECTS: --objects needs --metadata etcd://…']);
  });

  it('refuses --durability async with --objects, with the reason; takes sync and async otherwise', () => {
    expect(errors(['--metadata', ETCD, '--objects', 'file:/srv/objects', '--durability', 'async'])).toEqual([
      '--durability: --durability async is not offered with --objects: an append is acknowledged once its object is stored and the ledger commit made',
    ]);
    expect('errors' in loadConfig(['--metadata', ETCD, '--objects', 'file:/srv/objects', '--durability', 'sync'], {})).toBe(false);
    expect(ok(['--durability', 'async']).durability).toBe('async');
    expect(errors(['--durability', 'fast'])).toHaveLength(1);
  });

  it('refuses a URL it cannot use, saying why and showing the forms', () => {
    const [bad] = errors(['--metadata', ETCD, '--objects', 'ftp://x/y']);
    expect(bad).toMatch(/^--objects: objects URL "ftp:\/\/x\/y": unknown scheme \(forms: file:<dir> or s3:\/\/<bucket>/);
    expect(errors(['--metadata', ETCD, '--objects', 's3://AK:SECRET@bkt/p'])[0]).toMatch(/credentials do not go in the URL; set AWS_ACCESS_KEY_ID/);
    expect(errors(['--metadata', ETCD, '--objects', 's3://bkt/p?endpoint=nope'])[0]).toMatch(/endpoint "nope" is not a URL/);
    expect(errors(['--metadata', ETCD, '--objects', 's3://bkt/p?bucket=x'])[0]).toMatch(/unknown parameter "bucket"/);
    expect(errors(['--metadata', ETCD, '--objects', 's3://bkt/a/../b'])[0]).toMatch(/\.\. segment/);
    expect(errors(['--objects-flush-ms', '-1'])).toEqual(['--objects-flush-ms: must be an integer from 0 to 10000 (got "-1")']);
  });

  it('warns once about etcd metadata without an object store, and not otherwise', () => {
    expect(configWarnings(ok(['--metadata', ETCD]))).toEqual([expect.stringMatching(/^--metadata etcd:\/\/… without --objects: stream data stays on its owner's disk/)]);
    expect(configWarnings(ok(['--metadata', ETCD, '--objects', 'file:x']))).toEqual([]);
    expect(configWarnings(ok([]))).toEqual([]);
  });
});

describe('etcd TLS and authentication settings', () => {
  const errorsOf = (argv: string[]): string[] => {
    const r = loadConfig(argv, {});
    return 'errors' in r ? r.errors : [];
  };
  it('takes etcds:// with a CA, a client certificate and a user with a password file', () => {
    expect(errorsOf(['--metadata', 'etcds://h1:2379,h2:2379/svc/prod', '--metadata-ca', 'ca.pem', '--metadata-cert', 'c.pem', '--metadata-key', 'k.pem', '--metadata-user', 'svc', '--metadata-password-file', 'pw'])).toEqual([]);
  });
  it('refuses what does not fit together, naming the setting', () => {
    expect(errorsOf(['--metadata', 'etcd://h:2379/p', '--metadata-ca', 'ca.pem'])).toEqual(['--metadata-ca: needs --metadata etcds://… (TLS to etcd)']);
    expect(errorsOf(['--metadata', 'etcds://h:2379/p', '--metadata-cert', 'c.pem'])).toEqual(['--metadata-cert: give the client certificate and its key together (--metadata-cert and --metadata-key)']);
    expect(errorsOf(['--metadata', 'etcds://h:2379/p', '--metadata-user', 'svc'])).toEqual(['--metadata-user: needs --metadata-password or --metadata-password-file']);
    expect(errorsOf(['--metadata', 'etcds://h:2379/p', '--metadata-password', 'x'])).toEqual(['--metadata-password: needs --metadata-user']);
    expect(errorsOf(['--metadata-user', 'svc', '--metadata-password', 'x'])).toEqual(['--metadata-user: needs --metadata etcd://… or etcds://…']);
  });
});
