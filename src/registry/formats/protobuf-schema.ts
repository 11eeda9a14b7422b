/**
 * PROTOBUF: a .proto text must parse and resolve with protobufjs, its imports given as
 * references (reference name = import path) or one of the well-known `google/protobuf/*.proto`
 * files protobufjs ships. Compatibility by the difference rules Confluent documents for
 * Protobuf: messages matched by full name, fields by number; incompatible are PACKAGE_CHANGED,
 * MESSAGE_REMOVED, FIELD_KIND_CHANGED (scalar, message, map), FIELD_SCALAR_KIND_CHANGED (outside
 * one wire-compatible group), FIELD_NAMED_TYPE_CHANGED, REQUIRED_FIELD_ADDED, REQUIRED_FIELD_REMOVED,
 * ONEOF_FIELD_REMOVED, MULTIPLE_FIELDS_MOVED_TO_ONEOF and FIELD_MOVED_TO_EXISTING_ONEOF.
 * The check is the same in both directions. The only importer of protobufjs's full build
 * (its parser and reflection).
 */
import * as protobuf from 'protobufjs';
import { type Parsed, type ParsedSchema, type RecordDecoder, type ResolvedReference } from './format';

interface Model {
  pkg: string;
  /** The messages the schema itself defines (not its references'), by full name. */
  messages: Map<string, protobuf.Type>;
}

function declaredTypes(ns: protobuf.NamespaceBase, into: Map<string, protobuf.Type>): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) into.set(nested.fullName.replace(/^\./, ''), nested);
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) declaredTypes(nested, into);
  }
}

export function parseProtobuf(text: string, references: readonly ResolvedReference[]): Parsed {
  try {
    const root = new protobuf.Root();
    const imports = new Set<string>();
    for (const r of references) {
      const p = protobuf.parse(r.schema, root, { keepCase: true });
      for (const i of p.imports ?? []) imports.add(i);
    }
    const before = new Map<string, protobuf.Type>();
    declaredTypes(root, before);
    const main = protobuf.parse(text, root, { keepCase: true });
    for (const i of main.imports ?? []) imports.add(i);
    const given = new Set(references.map((r) => r.name));
    for (const i of imports) {
      if (given.has(i)) continue;
      const wellKnown = protobuf.common.get(i);
      if (wellKnown === null || wellKnown === undefined) return { ok: false, message: `Invalid schema: import "${i}" is neither a reference nor a well-known type` };
      root.addJSON(wellKnown.nested ?? {});
    }
    root.resolveAll();
    const all = new Map<string, protobuf.Type>();
    declaredTypes(root, all);
    const messages = new Map([...all].filter(([name]) => !before.has(name) && !name.startsWith('google.protobuf.')));
    const canonical = text.trim();
    return { ok: true, canonical, normalized: canonical.replace(/\s+/g, ' '), model: { pkg: main.package ?? '', messages } satisfies Model };
  } catch (err) {
    return { ok: false, message: `Invalid schema: ${(err as Error).message}` };
  }
}

/** Scalars whose values read back unchanged as one another (Confluent's wire-compatible groups). */
const GROUPS = [['int32', 'uint32', 'int64', 'uint64', 'bool'], ['sint32', 'sint64'], ['fixed32', 'sfixed32'], ['fixed64', 'sfixed64'], ['string', 'bytes']];
const sameGroup = (a: string, b: string): boolean => a === b || GROUPS.some((g) => g.includes(a) && g.includes(b));

type Kind = 'map' | 'message' | 'scalar';
function kindOf(f: protobuf.Field): Kind {
  if (f instanceof protobuf.MapField) return 'map';
  return f.resolvedType instanceof protobuf.Type ? 'message' : 'scalar';
}
const named = (f: protobuf.Field): string | null => (f.resolvedType === null ? null : f.resolvedType.fullName);

export function protobufReadProblems(reader: ParsedSchema, writer: ParsedSchema): string[] {
  const o = writer.model as Model;
  const u = reader.model as Model;
  const out: string[] = [];
  if (o.pkg !== u.pkg) out.push(`PACKAGE_CHANGED: ${o.pkg || '(none)'} → ${u.pkg || '(none)'}`);
  for (const [name, om] of o.messages) {
    const um = u.messages.get(name);
    if (um === undefined) {
      out.push(`${name}: MESSAGE_REMOVED`);
      continue;
    }
    const movedToNewOneof = new Map<string, number>();
    for (const of of om.fieldsArray) {
      const at = `${name}.${of.name} (${of.id})`;
      const uf = um.fieldsById[of.id];
      if (uf === undefined) {
        if (of.required) out.push(`${at}: REQUIRED_FIELD_REMOVED`);
        else if (of.partOf !== null && !isSynthetic(of)) out.push(`${at}: ONEOF_FIELD_REMOVED`);
        continue; // FIELD_REMOVED: compatible
      }
      const ok = kindOf(of);
      const uk = kindOf(uf);
      if (ok !== uk) out.push(`${at}: FIELD_KIND_CHANGED`);
      else if (ok === 'map') {
        const om2 = of as unknown as protobuf.MapField;
        const um2 = uf as unknown as protobuf.MapField;
        if (!sameGroup(om2.keyType, um2.keyType) || (named(of) ?? of.type) !== (named(uf) ?? uf.type)) out.push(`${at}: FIELD_KIND_CHANGED`);
      } else if (named(of) !== null || named(uf) !== null) {
        if (named(of) !== named(uf)) out.push(`${at}: FIELD_NAMED_TYPE_CHANGED`);
      } else if (!sameGroup(of.type, uf.type)) out.push(`${at}: FIELD_SCALAR_KIND_CHANGED`);
      const oOneof = of.partOf !== null && !isSynthetic(of) ? of.partOf.name : null;
      const uOneof = uf.partOf !== null && !isSynthetic(uf) ? uf.partOf.name : null;
      if (oOneof === null && uOneof !== null) {
        if (om.oneofs?.[uOneof] !== undefined) out.push(`${at}: FIELD_MOVED_TO_EXISTING_ONEOF`);
        else movedToNewOneof.set(uOneof, (movedToNewOneof.get(uOneof) ?? 0) + 1);
      }
    }
    for (const [oneof, n] of movedToNewOneof) if (n > 1) out.push(`${name}.${oneof}: MULTIPLE_FIELDS_MOVED_TO_ONEOF`);
    for (const uf of um.fieldsArray) if (om.fieldsById[uf.id] === undefined && uf.required) out.push(`${name}.${uf.name} (${uf.id}): REQUIRED_FIELD_ADDED`);
  }
  return out;
}

/** proto3 `optional` makes a one-field oneof named `_<field>`: not a oneof the author wrote. */
function isSynthetic(f: protobuf.Field): boolean {
  return f.partOf !== null && f.partOf.oneof.length === 1 && f.partOf.name === `_${f.name}`;
}

/** Confluent's message indexes: a zig-zag varint count, then that many zig-zag varints; a single 0 byte is [0]. */
function readMessageIndexes(buf: Buffer): { indexes: number[]; next: number } | string {
  let pos = 0;
  const zigzag = (): number | null => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (pos >= buf.length || shift > 28) return null;
      const b = buf[pos++]!;
      v |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    return (v >>> 1) ^ -(v & 1);
  };
  const count = zigzag();
  if (count === null || count < 0 || count > 64) return 'the Protobuf message indexes are malformed';
  if (count === 0) return { indexes: [0], next: pos };
  const indexes: number[] = [];
  for (let i = 0; i < count; i++) {
    const x = zigzag();
    if (x === null || x < 0) return 'the Protobuf message indexes are malformed';
    indexes.push(x);
  }
  return { indexes, next: pos };
}

/**
 * A check of one record's Protobuf payload (message indexes, then the message): null when the
 * indexes name a message of the schema and the bytes decode as it, else why not. The record name
 * (RecordNameStrategy) is the named message's full name.
 */
export function protobufRecordDecoder(parsed: ParsedSchema): RecordDecoder {
  const model = parsed.model as Model;
  const top = [...model.messages.values()].filter((t) => !(t.parent instanceof protobuf.Type));
  const resolve = (payload: Buffer): { type: protobuf.Type; next: number } | string => {
    const r = readMessageIndexes(payload);
    if (typeof r === 'string') return r;
    let type = top[r.indexes[0]!];
    for (let i = 1; i < r.indexes.length && type !== undefined; i++) type = type.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type)[r.indexes[i]!];
    if (type === undefined) return `message indexes [${r.indexes.join(', ')}] name no message of the schema`;
    return { type, next: r.next };
  };
  return {
    check(payload) {
      const r = resolve(payload);
      if (typeof r === 'string') return r;
      try {
        r.type.decode(payload.subarray(r.next));
        return null;
      } catch (err) {
        return `not a ${r.type.fullName.replace(/^\./, '')} message: ${(err as Error).message}`;
      }
    },
    recordName(payload) {
      const r = resolve(payload);
      return typeof r === 'string' ? null : r.type.fullName.replace(/^\./, '');
    },
  };
}
