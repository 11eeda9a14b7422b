#!/usr/bin/env node
'use strict';
/**
 * Kafka codec generator: `npm run codegen:kafka [-- options]`.
 *
 *   Apache Kafka's message schemas ──(--schemas <dir>)──▶ spec/*.json ──▶ src/kafka-wire/messages/*.ts
 *
 * Without --schemas it regenerates the TypeScript from the committed summaries in spec/,
 * which is what CI checks (test/kafka-wire/codegen.test.ts). With --schemas <dir> (a folder
 * holding Apache Kafka's clients/src/main/resources/common/message/*.json) it first rewrites
 * the summaries from the schemas, e.g. to take a newer Kafka release or to advertise more
 * versions (apis.js).
 *
 * Options:
 *   --schemas <dir>  read Apache Kafka's message schemas from <dir> and rewrite spec/
 *   --spec <dir>     summaries folder (default: spec/ beside this script)
 *   --out <dir>      output folder (default: src/kafka-wire/messages)
 *   --check          write nothing; exit 1 when a file on disk differs from what would be written
 */
const fs = require('node:fs');
const path = require('node:path');
const { APIS } = require('./apis');
const { extractApi, extractHeaders, formatSpec } = require('./extract');
const { emitApiModule } = require('./emit-message');
const { emitHeaderModule, emitIndexModule } = require('./emit-index');

const ROOT = path.resolve(__dirname, '..', '..');
/** How the generated files name their generator (a path inside the repository). */
const GENERATOR = 'scripts/kafka-codegen';

function parseArgs(argv) {
  const opts = { schemas: null, spec: path.join(__dirname, 'spec'), out: path.join(ROOT, 'src', 'kafka-wire', 'messages'), check: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return path.resolve(v);
    };
    if (a === '--schemas') opts.schemas = value();
    else if (a === '--spec') opts.spec = value();
    else if (a === '--out') opts.out = value();
    else if (a === '--check') opts.check = true;
    else throw new Error(`unknown option ${a} (options: --schemas <dir>, --spec <dir>, --out <dir>, --check)`);
  }
  return opts;
}

/** Summaries from the schemas: file name → text. */
function summaries(schemasDir) {
  const files = new Map();
  for (const api of APIS) files.set(`${api.file}.json`, formatSpec(extractApi(api, schemasDir)));
  files.set('header.json', formatSpec(extractHeaders(schemasDir)));
  return files;
}

function readSpec(specFiles, name) {
  const text = specFiles.get(name);
  if (text === undefined) throw new Error(`summary ${name} missing`);
  return JSON.parse(text);
}

/** Generated modules from the summaries: file name → text. */
function modules(specFiles) {
  const files = new Map();
  const specs = APIS.map((api) => ({ file: api.file, spec: readSpec(specFiles, `${api.file}.json`) }));
  for (const { file, spec } of specs) files.set(`${file}.ts`, emitApiModule(spec, GENERATOR));
  files.set('header.ts', emitHeaderModule(readSpec(specFiles, 'header.json'), GENERATOR));
  files.set('index.ts', emitIndexModule(specs, GENERATOR));
  return files;
}

function readDir(dir, ext) {
  const files = new Map();
  if (!fs.existsSync(dir)) return files;
  for (const name of fs.readdirSync(dir).sort()) if (name.endsWith(ext)) files.set(name, fs.readFileSync(path.join(dir, name), 'utf8'));
  return files;
}

/** Names of files that differ between `want` and the `ext` files in `dir` (missing and extra ones included). */
function diff(want, dir, ext) {
  const have = readDir(dir, ext);
  const names = new Set([...want.keys(), ...have.keys()]);
  return [...names].sort().filter((n) => want.get(n) !== have.get(n)).map((n) => path.join(dir, n));
}

/** Replace the `ext` files of `dir` by `files`. */
function writeDir(dir, files, ext) {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) if (name.endsWith(ext) && !files.has(name)) fs.rmSync(path.join(dir, name));
  for (const [name, text] of files) fs.writeFileSync(path.join(dir, name), text);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const specFiles = opts.schemas !== null ? summaries(opts.schemas) : readDir(opts.spec, '.json');
  const tsFiles = modules(specFiles);
  if (opts.check) {
    const stale = [...(opts.schemas !== null ? diff(specFiles, opts.spec, '.json') : []), ...diff(tsFiles, opts.out, '.ts')];
    if (stale.length > 0) {
      console.error(`out of date (run npm run codegen:kafka):\n  ${stale.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`kafka codegen: ${tsFiles.size} modules up to date`);
    return;
  }
  if (opts.schemas !== null) writeDir(opts.spec, specFiles, '.json');
  writeDir(opts.out, tsFiles, '.ts');
  console.log(`kafka codegen: wrote ${tsFiles.size} modules to ${path.relative(process.cwd(), opts.out) || '.'}`);
}

try {
  main();
} catch (err) {
  console.error(`kafka codegen: ${err.message}`);
  process.exit(1);
}
