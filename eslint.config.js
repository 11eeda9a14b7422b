// ESLint flat config. Besides the recommended rule sets it enforces the import direction
// of ARCHITECTURE.md ("Module layout and import direction") and that each native or
// network library is imported by exactly one owner file.
'use strict';

const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const { defineConfig, globalIgnores } = require('eslint/config');

/** Library → the only file allowed to import it (a list where each program has its own). */
const OWNERS = {
  '@trufflesuite/uws-js-unofficial': 'src/program/http/uws-engine.ts',
  '@nxtedition/rocksdb': 'src/shards/worker/rocks-store.ts',
  '@node-rs/crc32': 'src/util/crc32c.ts',
  pino: 'src/log.ts',
  'smol-toml': 'src/program/toml.ts',
  'fast-xml-parser': 'src/s3/xml-parse.ts',
  'prom-client': ['src/s3/metrics.ts', 'src/connect/metrics.ts', 'src/gateway/metrics/node-metrics.ts'],
  '@napi-rs/keyring': 'src/cli/client/token-store.ts',
  etcd3: 'src/actors/meta/etcd/etcd-link.ts',
  cockatiel: 'src/actors/meta/etcd/etcd-link.ts',
  koffi: ['src/connect/native/ffi.ts', 'src/util/libc.ts'],
  pg: 'src/connect/plugins/postgres-client.ts',
  '@grpc/grpc-js': ['src/connect/otlp-grpc.ts', 'test/connect/helpers/otlp-grpc-collector.ts'],
  '@opentelemetry/api': 'src/tracing.ts',
  '@opentelemetry/core': 'src/tracing.ts',
  '@opentelemetry/resources': 'src/tracing.ts',
  '@opentelemetry/sdk-trace': 'src/tracing.ts',
  '@opentelemetry/exporter-trace-otlp-http': 'src/tracing.ts',
  avsc: 'src/registry/formats/avro-schema.ts',
  protobufjs: ['src/registry/formats/protobuf-schema.ts', 'test/actors/etcd-txn-wire.test.ts', 'test/connect/telemetry.test.ts', 'test/registry/wire-format.ts'],
};

/** A relative import that climbs out of the current folder into one of `folders`. */
const into = (folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;

/** Edges reach the gateway through its front door (src/gateway/index.ts), never into its folders. */
const GATEWAY_DOOR = { regex: '^(\\.\\.?/)+gateway/', message: 'import the gateway through its index (./gateway or ../gateway).' };

/** Inside src/gateway: what every gateway folder keeps to. */
const GATEWAY_RULES = [
  { regex: into(['kafka-wire', 's3', 'connect', 'cli']), message: 'edges never import each other.' },
  { regex: '^(\\.\\./)+shards/[^/]+/', message: 'import shards through its index (../shards).' },
];

/** Import rules per source folder (paths relative to the repository root). */
const FOLDERS = [
  {
    dir: 'src/shards',
    patterns: [
      { regex: into(['gateway', 'kafka-wire', 'actors', 's3', 'connect', 'cli']), message: 'shards is the data plane: it knows nothing of edges or the control plane.' },
    ],
  },
  {
    dir: 'src/util',
    patterns: [{ regex: '^(\\.\\./)+(?!util(/|$))\\w', message: 'util holds leaf helpers: it imports nothing from other src folders.' }],
  },
  {
    dir: 'src/program',
    patterns: [{ regex: '^(\\.\\./)+(?!program(/|$))\\w', message: 'program holds the plumbing every program shares: it imports nothing from other src folders.' }],
  },
  // One folder down inside src/program, `../` stays in program and `../../` reaches src/.
  {
    dir: 'src/program/*',
    patterns: [{ regex: '^\\.\\./(\\.\\./)+(?!program(/|$))\\w', message: 'program holds the plumbing every program shares: it imports nothing from other src folders.' }],
  },
  { dir: 'src/gateway', patterns: GATEWAY_RULES },
  // The listener kit is below the listeners: Svc, Durable Streams and admin import it, never the reverse.
  {
    dir: 'src/gateway/kit',
    patterns: [...GATEWAY_RULES, { regex: into(['svc', 'ds', 'admin', 'auth', 'metrics']), message: 'the listener kit is shared by the listeners; it imports none of them.' }],
  },
  // A listener takes what another also uses from ../kit, never from the other listener's folder.
  {
    dir: 'src/gateway/svc',
    patterns: [...GATEWAY_RULES, { regex: into(['ds', 'admin']), message: 'listeners share code through ../kit, not through each other.' }],
  },
  {
    dir: 'src/gateway/ds',
    patterns: [...GATEWAY_RULES, { regex: into(['svc', 'admin']), message: 'listeners share code through ../kit, not through each other.' }],
  },
  {
    dir: 'src/gateway/admin',
    patterns: [...GATEWAY_RULES, { regex: into(['svc', 'ds']), message: 'listeners share code through ../kit, not through each other.' }],
  },
  // The Kafka edge takes the live-read registry's types from the gateway's front door, nothing more:
  // the registry itself is passed in by src/node.ts.
  {
    dir: 'src/kafka-wire',
    patterns: [
      { regex: into(['s3', 'connect', 'cli']), message: 'edges never import each other.' },
      { regex: '^(\\.\\./)+gateway/', message: 'edges never import each other; the gateway front door (../gateway) gives types only.' },
      { regex: '^(\\.\\./)+gateway$', message: 'edges never import each other: take only types (import type) from ../gateway.', allowTypeImports: true },
      { regex: '^(\\.\\./)+shards/[^/]+/', message: 'import shards through its index (../shards).' },
    ],
  },
  {
    dir: 'src/s3',
    patterns: [{ regex: '^(\\.\\./)+(?!util(/|$)|program(/|$)|s3(/|$))\\w', message: 'svc-cache is independent: it imports only ../util and ../program.' }],
  },
  // One folder down inside src/s3, `../` stays in svc-cache and `../../` reaches src/.
  {
    dir: 'src/s3/*',
    patterns: [{ regex: '^\\.\\./(\\.\\./)+(?!util(/|$)|program(/|$)|s3(/|$))\\w', message: 'svc-cache is independent: it imports only ../util and ../program.' }],
  },
  // The object store (src/objects/README.md): leaf helpers, the error list and svc-cache's SigV4 signer, nothing else; the ledger also the etcd link (../actors, its front door).
  // It sits below the data plane: src/shards imports it, never the reverse (test/layering.test.ts checks the built code for cycles).
  {
    dir: 'src/objects',
    patterns: [{ regex: '^(\\.\\./)+(?!util(/|$)|errors$|s3/sigv4(/|$)|objects(/|$)|actors$)\\w', message: 'the object store sits below the data plane: it imports only ../util, ../errors, ../s3/sigv4 and (the ledger) ../actors, never ../shards.' }],
  },
  // The schema registry (src/registry/README.md): an edge over the metadata store; no other edge, no data plane.
  {
    dir: 'src/registry',
    patterns: [{ regex: '^(\\.\\./)+(?!actors$|program/http$|util(/|$)|errors$|registry(/|$))\\w', message: 'the schema registry imports only ../actors (its index), ../program/http, ../util and ../errors.' }],
  },
  // One folder down inside src/registry, `../` stays in the registry and `../../` reaches src/.
  {
    dir: 'src/registry/*',
    patterns: [{ regex: '^\\.\\./(\\.\\./)+(?!actors$|program/http$|util(/|$)|errors$|registry(/|$))\\w', message: 'the schema registry imports only ../actors (its index), ../program/http, ../util and ../errors.' }],
  },
  // The command-line client talks to nodes over HTTP only: none of the node's parts.
  {
    dir: 'src/cli/client',
    patterns: [{ regex: '^(\\.\\./)+(shards|gateway|actors|kafka-wire|s3|connect|node|log|config)(/|$)', message: 'the client talks to nodes over HTTP only; it imports no part of the node.' }],
  },
  {
    dir: 'src/connect',
    patterns: [{ regex: '^(\\.\\./)+(?!util(/|$)|program(/|$)|connect(/|$))\\w', message: 'svc-connectors is independent: it imports only ../util and ../program.' }],
  },
  // One folder down inside src/connect, `../` stays in svc-connectors and `../../` reaches src/.
  {
    dir: 'src/connect/*',
    patterns: [{ regex: '^\\.\\./(\\.\\./)+(?!util(/|$)|program(/|$)|connect(/|$))\\w', message: 'svc-connectors is independent: it imports only ../util and ../program.' }],
  },
  // The files at the top of src/ (node.ts, the composition root, among them). Last: every folder above is matched first.
  { dir: 'src', files: ['src/*.ts'], patterns: [GATEWAY_DOOR] },
];

/** The composition root has side effects on load; nothing imports it. */
const NOT_MAIN = { regex: '^(\\.\\.?/)+main$', message: 'main.ts is the composition root; nothing imports it.' };

function restrictedImports(patterns, file) {
  const paths = Object.entries(OWNERS)
    .filter(([, owner]) => ![owner].flat().includes(file))
    .map(([name, owner]) => ({ name, message: `only ${[owner].flat().join(' or ')} imports ${name}; take what you need from it.` }));
  return ['error', { paths, patterns: [NOT_MAIN, ...patterns] }];
}

const folderOf = (file) => FOLDERS.find((f) => file.startsWith(f.dir + '/'));

/** Node globals for the plain JavaScript files (config, scripts, perf). */
const NODE_GLOBALS = Object.fromEntries(
  [
    'require', 'module', 'exports', '__dirname', '__filename', 'process', 'console', 'Buffer', 'global',
    'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'queueMicrotask',
    'structuredClone', 'fetch', 'Request', 'Response', 'Headers', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder',
    'AbortController', 'AbortSignal', 'performance', 'SharedArrayBuffer', 'Atomics', 'WebAssembly',
  ].map((g) => [g, 'readonly']),
);

module.exports = defineConfig([
  globalIgnores(['dist/', 'node_modules/', 'perf/node_modules/', 'perf/.work/', 'coverage/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: NODE_GLOBALS },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['**/*.mjs'], languageOptions: { sourceType: 'module', globals: NODE_GLOBALS } },
  // Import direction: the library owners everywhere in src/ and test/, folder rules on top.
  { files: ['src/**/*.ts', 'test/**/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': restrictedImports([], null) } },
  ...FOLDERS.map((f) => ({
    files: f.files ?? [`${f.dir}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': restrictedImports(f.patterns, null) },
  })),
  ...Object.values(OWNERS).flat().map((file) => ({
    files: [file],
    rules: { '@typescript-eslint/no-restricted-imports': restrictedImports(folderOf(file)?.patterns ?? [], file) },
  })),
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
]);
