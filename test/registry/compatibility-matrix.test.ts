/**
 * The compatibility matrix: per schema type and level, a subject's history and a candidate, and
 * the outcome Confluent's documentation gives (the rule is named in each case). Each case runs
 * through the registry's own register path over a real embedded metadata store, so what is
 * checked is what a client gets: accepted (a new version) or refused (409).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MetaStore, openLocalMetaStore } from '../../src/actors';
import { type CompatibilityLevel, SchemaRegistry } from '../../src/registry';
import { RegistryStore } from '../../src/registry/store';

type Type = 'AVRO' | 'JSON' | 'PROTOBUF';
interface Case {
  rule: string;
  type: Type;
  level: CompatibilityLevel;
  history: unknown[];
  candidate: unknown;
  compatible: boolean;
}

const rec = (fields: unknown[], name = 'User'): unknown => ({ type: 'record', name, namespace: 'com.example', fields });
const F = {
  name: { name: 'name', type: 'string' },
  age: { name: 'age', type: 'int' },
  ageLong: { name: 'age', type: 'long' },
  ageString: { name: 'age', type: 'string' },
  emailDefault: { name: 'email', type: 'string', default: '' },
  email: { name: 'email', type: 'string' },
  color: (symbols: string[], dflt?: string) => ({ name: 'color', type: { type: 'enum', name: 'Color', symbols, ...(dflt === undefined ? {} : { default: dflt }) } }),
};
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({ type: 'object', properties, ...extra });
const proto = (body: string, pkg = 'demo'): string => `syntax = "proto3";\npackage ${pkg};\n${body}\n`;

const CASES: Case[] = [
  // AVRO: Confluent's "Avro compatibility" table (schema evolution and compatibility), by Avro's resolution rules.
  { rule: 'BACKWARD: adding a field with a default is allowed', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name])], candidate: rec([F.name, F.emailDefault]), compatible: true },
  { rule: 'BACKWARD: adding a field without a default is refused (new reader has no value for old data)', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name])], candidate: rec([F.name, F.email]), compatible: false },
  { rule: 'BACKWARD: deleting a field is allowed', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name, F.age])], candidate: rec([F.name]), compatible: true },
  { rule: 'BACKWARD: promoting int to long is allowed', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name, F.age])], candidate: rec([F.name, F.ageLong]), compatible: true },
  { rule: 'BACKWARD: changing int to string is refused', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name, F.age])], candidate: rec([F.name, F.ageString]), compatible: false },
  { rule: 'BACKWARD: removing an enum symbol without a reader default is refused', type: 'AVRO', level: 'BACKWARD', history: [rec([F.color(['RED', 'GREEN'])])], candidate: rec([F.color(['RED'])]), compatible: false },
  { rule: 'BACKWARD: adding an enum symbol is allowed', type: 'AVRO', level: 'BACKWARD', history: [rec([F.color(['RED'])])], candidate: rec([F.color(['RED', 'GREEN'])]), compatible: true },
  { rule: 'BACKWARD: renaming the record without an alias is refused', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name])], candidate: rec([F.name], 'Person'), compatible: false },
  { rule: 'FORWARD: deleting a field without a default is refused (old reader needs it)', type: 'AVRO', level: 'FORWARD', history: [rec([F.name, F.age])], candidate: rec([F.name]), compatible: false },
  { rule: 'FORWARD: adding a field without a default is allowed (old reader ignores it)', type: 'AVRO', level: 'FORWARD', history: [rec([F.name])], candidate: rec([F.name, F.email]), compatible: true },
  { rule: 'FORWARD: promoting int to long is refused (old reader cannot read long)', type: 'AVRO', level: 'FORWARD', history: [rec([F.name, F.age])], candidate: rec([F.name, F.ageLong]), compatible: false },
  { rule: 'FULL: adding a field with a default is allowed', type: 'AVRO', level: 'FULL', history: [rec([F.name])], candidate: rec([F.name, F.emailDefault]), compatible: true },
  { rule: 'FULL: adding a field without a default is refused', type: 'AVRO', level: 'FULL', history: [rec([F.name])], candidate: rec([F.name, F.email]), compatible: false },
  { rule: 'BACKWARD checks the latest version only: a candidate unreadable against version 1 passes', type: 'AVRO', level: 'BACKWARD', history: [rec([F.name, F.age]), rec([F.name])], candidate: rec([F.name, { name: 'age', type: 'string', default: '' }]), compatible: true },
  { rule: 'BACKWARD_TRANSITIVE checks every version: the same candidate is refused against version 1', type: 'AVRO', level: 'BACKWARD_TRANSITIVE', history: [rec([F.name, F.age]), rec([F.name])], candidate: rec([F.name, { name: 'age', type: 'string', default: '' }]), compatible: false },
  { rule: 'FORWARD_TRANSITIVE: every earlier reader must read the new data', type: 'AVRO', level: 'FORWARD_TRANSITIVE', history: [rec([F.name, F.age]), rec([F.name, F.age, F.emailDefault])], candidate: rec([F.name, F.emailDefault]), compatible: false },
  { rule: 'FULL_TRANSITIVE: fields with defaults added over versions stay compatible', type: 'AVRO', level: 'FULL_TRANSITIVE', history: [rec([F.name]), rec([F.name, F.emailDefault])], candidate: rec([F.name, F.emailDefault, { name: 'tag', type: 'string', default: 'x' }]), compatible: true },
  { rule: 'NONE: any change is allowed', type: 'AVRO', level: 'NONE', history: [rec([F.name, F.age])], candidate: rec([F.ageString]), compatible: true },

  // JSON: Confluent's JSON Schema compatibility rules (content models; the original is the writer's schema).
  { rule: 'BACKWARD: PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'string' }, b: { type: 'number' } }), compatible: false },
  { rule: 'BACKWARD: OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } }, { additionalProperties: false })], candidate: obj({ a: { type: 'string' }, b: { type: 'number' } }, { additionalProperties: false }), compatible: true },
  { rule: 'BACKWARD: REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } }, { additionalProperties: false })], candidate: obj({ a: { type: 'string' }, b: { type: 'number' } }, { additionalProperties: false, required: ['b'] }), compatible: false },
  { rule: 'BACKWARD: REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } }, { additionalProperties: false })], candidate: obj({ a: { type: 'string' }, b: { type: 'number', default: 0 } }, { additionalProperties: false, required: ['b'] }), compatible: true },
  { rule: 'BACKWARD: PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' }, b: { type: 'number' } })], candidate: obj({ a: { type: 'string' } }), compatible: true },
  { rule: 'BACKWARD: PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' }, b: { type: 'number' } }, { additionalProperties: false })], candidate: obj({ a: { type: 'string' } }, { additionalProperties: false }), compatible: false },
  { rule: 'BACKWARD: TYPE_EXTENDED (integer to number) is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ n: { type: 'integer' } })], candidate: obj({ n: { type: 'number' } }), compatible: true },
  { rule: 'BACKWARD: TYPE_NARROWED (number to integer) is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ n: { type: 'number' } })], candidate: obj({ n: { type: 'integer' } }), compatible: false },
  { rule: 'BACKWARD: TYPE_CHANGED (string to number) is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'number' } }), compatible: false },
  { rule: 'BACKWARD: REQUIRED_ATTRIBUTE_ADDED is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'string' } }, { required: ['a'] }), compatible: false },
  { rule: 'BACKWARD: REQUIRED_ATTRIBUTE_REMOVED is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } }, { required: ['a'] })], candidate: obj({ a: { type: 'string' } }), compatible: true },
  { rule: 'BACKWARD: MAX_LENGTH_DECREASED is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string', maxLength: 10 } })], candidate: obj({ a: { type: 'string', maxLength: 5 } }), compatible: false },
  { rule: 'BACKWARD: MAX_LENGTH_INCREASED is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string', maxLength: 5 } })], candidate: obj({ a: { type: 'string', maxLength: 10 } }), compatible: true },
  { rule: 'BACKWARD: ENUM_ARRAY_EXTENDED is compatible', type: 'JSON', level: 'BACKWARD', history: [obj({ c: { enum: ['r', 'g'] } })], candidate: obj({ c: { enum: ['r', 'g', 'b'] } }), compatible: true },
  { rule: 'BACKWARD: ENUM_ARRAY_NARROWED is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ c: { enum: ['r', 'g'] } })], candidate: obj({ c: { enum: ['r'] } }), compatible: false },
  { rule: 'BACKWARD: ADDITIONAL_PROPERTIES_REMOVED (open to closed) is incompatible', type: 'JSON', level: 'BACKWARD', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'string' } }, { additionalProperties: false }), compatible: false },
  { rule: 'BACKWARD: SUM_TYPE_EXTENDED (oneOf gains an alternative) is compatible', type: 'JSON', level: 'BACKWARD', history: [{ oneOf: [{ type: 'string' }, { type: 'number' }] }], candidate: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] }, compatible: true },
  { rule: 'BACKWARD: SUM_TYPE_NARROWED (oneOf loses an alternative) is incompatible', type: 'JSON', level: 'BACKWARD', history: [{ oneOf: [{ type: 'string' }, { type: 'number' }] }], candidate: { oneOf: [{ type: 'string' }] }, compatible: false },
  { rule: 'FORWARD: PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL read the other way is PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL: compatible', type: 'JSON', level: 'FORWARD', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'string' }, b: { type: 'number' } }), compatible: true },
  { rule: 'FORWARD: TYPE_EXTENDED by the new writer is TYPE_NARROWED for the old reader: incompatible', type: 'JSON', level: 'FORWARD', history: [obj({ n: { type: 'integer' } })], candidate: obj({ n: { type: 'number' } }), compatible: false },
  { rule: 'FULL: an optional property added to a closed model is refused: compatible backward, but PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL forward', type: 'JSON', level: 'FULL', history: [obj({ a: { type: 'string' } }, { additionalProperties: false })], candidate: obj({ a: { type: 'string' }, b: { type: 'number' } }, { additionalProperties: false }), compatible: false },
  { rule: 'FULL: a description change is compatible both ways (DESCRIPTION_CHANGED)', type: 'JSON', level: 'FULL', history: [obj({ a: { type: 'string', description: 'x' } })], candidate: obj({ a: { type: 'string', description: 'y' } }), compatible: true },
  { rule: 'BACKWARD_TRANSITIVE: a narrowing against version 1 is refused', type: 'JSON', level: 'BACKWARD_TRANSITIVE', history: [obj({ n: { type: 'number' } }), obj({ n: { type: 'number' }, m: {} })], candidate: obj({ n: { type: 'integer' }, m: {} }), compatible: false },
  { rule: 'NONE: any change is allowed', type: 'JSON', level: 'NONE', history: [obj({ a: { type: 'string' } })], candidate: obj({ a: { type: 'number' } }), compatible: true },

  // PROTOBUF: Confluent's Protobuf compatibility rules (messages by full name, fields by number).
  { rule: 'BACKWARD: FIELD_ADDED is compatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { string name = 1; }')], candidate: proto('message User { string name = 1; int32 age = 2; }'), compatible: true },
  { rule: 'BACKWARD: FIELD_REMOVED is compatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { string name = 1; int32 age = 2; }')], candidate: proto('message User { string name = 1; }'), compatible: true },
  { rule: 'BACKWARD: FIELD_SCALAR_KIND_CHANGED (string to int32) is incompatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { string name = 1; }')], candidate: proto('message User { int32 name = 1; }'), compatible: false },
  { rule: 'BACKWARD: int32 to int64 stays in one wire-compatible group: compatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { int32 age = 1; }')], candidate: proto('message User { int64 age = 1; }'), compatible: true },
  { rule: 'BACKWARD: MESSAGE_REMOVED is incompatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { string name = 1; }\nmessage Extra { int32 x = 1; }')], candidate: proto('message User { string name = 1; }'), compatible: false },
  { rule: 'BACKWARD: PACKAGE_CHANGED is incompatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message User { string name = 1; }')], candidate: proto('message User { string name = 1; }', 'other'), compatible: false },
  { rule: 'BACKWARD: FIELD_KIND_CHANGED (scalar to message) is incompatible', type: 'PROTOBUF', level: 'BACKWARD', history: [proto('message Name { string v = 1; }\nmessage User { string name = 1; }')], candidate: proto('message Name { string v = 1; }\nmessage User { Name name = 1; }'), compatible: false },
  { rule: 'FORWARD: FIELD_ADDED is compatible (the rules are the same both ways)', type: 'PROTOBUF', level: 'FORWARD', history: [proto('message User { string name = 1; }')], candidate: proto('message User { string name = 1; int32 age = 2; }'), compatible: true },
  { rule: 'FULL: FIELD_SCALAR_KIND_CHANGED is incompatible', type: 'PROTOBUF', level: 'FULL', history: [proto('message User { string name = 1; }')], candidate: proto('message User { double name = 1; }'), compatible: false },
  { rule: 'NONE: any change is allowed', type: 'PROTOBUF', level: 'NONE', history: [proto('message User { string name = 1; }')], candidate: proto('message User { double name = 1; }', 'x'), compatible: true },
];

let dir: string;
let meta: MetaStore;
let registry: SchemaRegistry;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-matrix-'));
  meta = await openLocalMetaStore(dir);
  registry = new SchemaRegistry(new RegistryStore(meta));
});

afterAll(async () => {
  await meta.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = (s: unknown): string => (typeof s === 'string' ? s : JSON.stringify(s));

describe.each(CASES.map((c, i) => [`${c.type} ${c.rule}`, c, i] as const))('%s', (_name, c, i) => {
  test(c.compatible ? 'is registered as a new version' : 'is refused as incompatible (409)', async () => {
    const subject = `matrix-${i}`;
    // The history goes in without checks; then the level applies to the candidate.
    expect((await registry.setCompatibility(subject, 'NONE')).ok).toBe(true);
    for (const h of c.history) {
      const r = await registry.register(subject, { schema: text(h), schemaType: c.type, references: [] }, false);
      expect(r).toMatchObject({ ok: true });
    }
    await registry.setCompatibility(subject, c.level);
    const tested = await registry.testCompatibility(subject, null, { schema: text(c.candidate), schemaType: c.type, references: [] });
    expect(tested.ok).toBe(true);
    const r = await registry.register(subject, { schema: text(c.candidate), schemaType: c.type, references: [] }, false);
    if (c.compatible) {
      expect(tested.ok && tested.value).toEqual([]);
      expect(r).toMatchObject({ ok: true, value: { version: c.history.length + 1 } });
    } else {
      expect(tested.ok && tested.value.length).toBeGreaterThan(0);
      expect(r).toMatchObject({ ok: false, kind: 'incompatible_schema' });
    }
  });
});
