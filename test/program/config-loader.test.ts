/**
 * The shared config loader on a small schema of its own: names derived from the schema, the
 * precedence of flags, environment and file, every problem reported at once with the entry
 * that caused it, and the two environment styles the programs use.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import { camelWords, defineConfig, enumSchema, hostPortSchema, type Loaded } from '../../src/program';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-program-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const toml = (text: string) => {
  const file = path.join(dir, `c${n++}.toml`);
  fs.writeFileSync(file, text);
  return file;
};

const Schema = Type.Object(
  {
    listen: hostPortSchema('127.0.0.1', 80, 'listener'),
    mode: enumSchema(['a', 'b'] as const, { default: 'a', description: 'mode' }),
    verbose: Type.Boolean({ default: false }),
    limits: Type.Object({ maxItems: Type.Integer({ minimum: 1, default: 10 }) }, { additionalProperties: false }),
    tags: Type.Record(Type.String(), Type.String(), { default: {} }),
  },
  { additionalProperties: false },
);

const snake = (p: readonly string[]) => camelWords(p[p.length - 1]!).join('_');
const flagStyle = defineConfig({
  schema: Schema,
  naming: {
    flag: (p) => '--' + camelWords(p[p.length - 1]!).join('-'),
    env: (p) => (p[0] === 'tags' ? null : 'T_' + snake(p).toUpperCase()),
    toml: (p) => (p.length > 1 ? `${p[0]}.${snake(p)}` : snake(p)),
  },
  file: { flag: '--config', env: 'T_CONFIG' },
  env: { kind: 'fields', skipEmpty: true },
  fromText: (field, text) => {
    if (field.kind === 'hostport') {
      const [host, port] = text.split(':');
      return port === undefined ? text : { host, port: Number(port) };
    }
    return field.kind === 'integer' && /^\d+$/.test(text) ? Number(text) : field.kind === 'boolean' ? text === 'true' : text;
  },
  validator: 'ajv',
  checkEachSource: true,
});

const where = (l: Loaded<unknown>) => l.invalidValues.map((v) => `${v.entry?.name ?? '-'} ${v.path.join('.')}`);

describe('a schema-driven loader', () => {
  it('derives every name from the schema and gives the defaults with nothing set', () => {
    expect(flagStyle.fields.map((f) => [f.path.join('.'), f.flag, f.env, f.tomlKey, f.kind])).toEqual([
      ['listen', '--listen', 'T_LISTEN', 'listen', 'hostport'],
      ['mode', '--mode', 'T_MODE', 'mode', 'enum'],
      ['verbose', '--verbose', 'T_VERBOSE', 'verbose', 'boolean'],
      ['limits.maxItems', '--max-items', 'T_MAX_ITEMS', 'limits.max_items', 'integer'],
      ['tags', '--tags', null, 'tags', 'record'],
    ]);
    const l = flagStyle.load([], {});
    expect(l.ok).toBe(true);
    expect(l.config).toEqual({ listen: { host: '127.0.0.1', port: 80 }, mode: 'a', verbose: false, limits: { maxItems: 10 }, tags: {} });
    expect(l.effective('mode')).toBeUndefined();
  });

  it('layers file < environment < flags and remembers which entry set each field', () => {
    const file = toml('mode = "b"\nverbose = true\n[limits]\nmax_items = 3\n[tags]\nteam = "x"\n');
    const l = flagStyle.load(['--config', file, '--max-items', '5', '--no-verbose'], { T_MAX_ITEMS: '4', T_MODE: '' });
    expect(l.ok).toBe(true);
    expect(l.config).toMatchObject({ mode: 'b', verbose: false, limits: { maxItems: 5 }, tags: { team: 'x' } });
    expect(l.file).toBe(file);
    expect(['mode', 'verbose', 'limits.maxItems'].map((p) => { const e = l.effective(p)!; return [e.source, e.name]; })).toEqual([['file', 'mode'], ['flag', '--no-verbose'], ['flag', '--max-items']]);
  });

  it('reports every problem at once: sources first, then each bad value with the entry that gave it, even one a later source overrides', () => {
    const file = toml('colour = 1\nlimits = 3\n[tags]\nteam = 5\n');
    const l = flagStyle.load(['stray', '--nope', 'x', '--mode', 'c', '--config', file], { T_MAX_ITEMS: 'many', T_LISTEN: 'h:99999' });
    expect(l.ok).toBe(false);
    expect(l.sourceProblems.map((p) => p.kind)).toEqual(['argument', 'unknown-flag', 'unknown-key', 'not-a-table']);
    expect(where(l)).toEqual(['tags tags.team', 'T_LISTEN listen.port', 'T_MAX_ITEMS limits.maxItems', '--mode mode']);
    expect([...l.invalid].sort()).toEqual(['limits.maxItems', 'listen', 'mode', 'tags']);
    // Overridden by a flag, the bad variable is still reported; the effective value is valid.
    const o = flagStyle.load(['--max-items', '2'], { T_MAX_ITEMS: 'many' });
    expect(where(o)).toEqual(['T_MAX_ITEMS limits.maxItems']);
    expect(o.invalid.size).toBe(0);
  });

  it('reports a config file that cannot be read or parsed with the flag or variable that named it', () => {
    const missing = flagStyle.load([], { T_CONFIG: path.join(dir, 'absent.toml') });
    expect(missing.sourceProblems).toEqual([expect.objectContaining({ kind: 'file', via: 'T_CONFIG', problem: { kind: 'unreadable', code: 'ENOENT' } })]);
    const bad = flagStyle.load(['--config', toml('mode = \n')], {});
    expect(bad.sourceProblems).toEqual([expect.objectContaining({ kind: 'file', via: '--config', problem: expect.objectContaining({ kind: 'syntax', line: 1 }) })]);
  });
});

describe('a nested-environment loader (converting validator)', () => {
  const nested = defineConfig({
    schema: Type.Object(
      {
        a: Type.Object({ b: Type.Integer({ default: 1 }), c: Type.String({ default: 'x' }), d: Type.Object({ e: Type.Boolean({ default: true }) }, { additionalProperties: false, default: {} }) }, { additionalProperties: false, default: {} }),
        m: Type.Record(Type.String(), Type.Number(), { default: {} }),
      },
      { additionalProperties: false },
    ),
    naming: {},
    file: { env: 'P_CONFIG_PATH' },
    env: { kind: 'nested', prefix: 'P_', separator: '__', ignore: (name) => name === 'P_CONFIG_PATH', parse: (t) => (/^[\d{]/.test(t) ? JSON.parse(t) as unknown : t) },
    validator: 'typebox',
  });

  it('sets any path from P_<A>__<B>, converts to the schema types, and refills the defaults of a table set whole', () => {
    const l = nested.load([], { P_A__C: '42', P_M__K: '7', P_A__D: '{}', P_UNRELATED: 'x' });
    expect(l.ok).toBe(true);
    expect(l.config).toEqual({ a: { b: 1, c: '42', d: { e: true } }, m: { k: 7 } });
  });

  it('reports an unknown variable like an unknown key, and a bad value in the validator words', () => {
    const l = nested.load([], { P_A__NOPE: '1', P_A__D__E: 'maybe', P_CONFIG_PATH: toml('[a]\nb = "two"\n') });
    expect(l.sourceProblems).toEqual([expect.objectContaining({ kind: 'unknown-key', entry: expect.objectContaining({ name: 'P_A__NOPE', path: ['a', 'nope'] }) })]);
    expect(l.invalidValues.map((v) => [v.entry?.name, v.path.join('.'), v.message])).toEqual([['a.b', 'a.b', 'Expected integer'], ['P_A__D__E', 'a.d.e', 'Expected boolean']]);
  });

  it('checks a document as if it were the file (embedding)', () => {
    const l = nested.loadDocument({ a: { b: 2, z: 1 } }, 'embedded');
    expect(l.sourceProblems).toEqual([expect.objectContaining({ kind: 'unknown-key', entry: expect.objectContaining({ name: 'a.z', file: 'embedded' }) })]);
    expect(l.config.a.b).toBe(2);
  });
});
