'use strict';
/**
 * One API's summary (spec/<api>.json) → the TypeScript module with its interfaces and its
 * request and response codecs for every advertised version.
 *
 * Shape of the generated code (kafka.apache.org/protocol, KIP-482 for flexible versions):
 * - one interface per struct; a field present in every version of its parent, and not tagged,
 *   is required, any other field is optional and marked with the versions that carry it;
 * - `readX(r, version, flexible)` returns every field, `undefined` for those the version lacks
 *   (and for tagged fields the frame did not carry); `writeX(w, v, version, flexible)` writes the
 *   fields of the version, taking the schema default for an optional field left undefined, and
 *   writes a tagged field when its value is defined;
 * - int64 is a bigint, uuid a canonical string, bytes and records zero-copy Buffers.
 */
const { covers, intersect } = require('./versions');
const { Code } = require('./code');

const TS_TYPES = {
  bool: 'boolean',
  int8: 'number',
  int16: 'number',
  uint16: 'number',
  int32: 'number',
  uint32: 'number',
  int64: 'bigint',
  float64: 'number',
  string: 'string',
  bytes: 'Buffer',
  records: 'Buffer',
  uuid: 'string',
};

/** Identifiers a field's local variable must not take in the generated functions. */
const RESERVED = new Set([
  'r', 'w', 'v', 'x', 'm', 'tag', 'version', 'flexible',
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum',
  'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'let', 'new',
  'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with',
  'yield', 'await', 'implements', 'interface', 'package', 'private', 'protected', 'public', 'static', 'undefined',
]);

const article = (word) => (/^[AEIOU]/.test(word) ? 'an' : 'a');
const camel = (name) => name.charAt(0).toLowerCase() + name.slice(1);
const screaming = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
const elemType = (type) => (type.startsWith('[]') ? type.slice(2) : type);
const isArray = (type) => type.startsWith('[]');
const isStruct = (field) => field.fields !== undefined;
const local = (field) => (RESERVED.has(camel(field.name)) ? `${camel(field.name)}_` : camel(field.name));

/** "v3+", "v4–12" or "v13", relative to the last version `max` of the message. */
function describeVersions([lo, hi], max) {
  if (lo === hi) return `v${lo}`;
  return hi === max ? `v${lo}+` : `v${lo}–${hi}`;
}

/** A default as documentation: `null`, `-1`, `""`, `true`. */
function describeDefault(field) {
  if (field.default === null) return 'null';
  return field.type === 'int64' ? String(field.default) : JSON.stringify(field.default);
}

/** A JS condition on `version` that holds exactly for `range` within `within`, or true. */
function versionCond(range, within) {
  const parts = [];
  if (range[0] > within[0]) parts.push(`version >= ${range[0]}`);
  if (range[1] < within[1]) parts.push(`version <= ${range[1]}`);
  return parts.length === 0 ? true : parts.join(' && ');
}

/** `(e)` → `e` where the parentheses are not needed: a whole right-hand side or argument. */
function unwrap(e) {
  if (!e.startsWith('(') || !e.endsWith(')')) return e;
  let depth = 0;
  for (let i = 0; i < e.length; i++) {
    if (e[i] === '(') depth++;
    else if (e[i] === ')') depth--;
    if (depth === 0 && i < e.length - 1) return e;
  }
  return e.slice(1, -1);
}

/** The TS type of a field's values. */
function fieldType(field, structName) {
  const elem = elemType(field.type);
  const base = isStruct(field) ? structName(field) : TS_TYPES[elem];
  if (base === undefined) throw new Error(`no TypeScript type for ${field.type}`);
  const t = isArray(field.type) ? `${base}[]` : base;
  return field.nullable !== undefined ? `${t} | null` : t;
}

/** The literal an optional field takes when a version carries it and the value is undefined. */
function defaultLiteral(field) {
  if (field.default === null) return 'null';
  if (isArray(field.type)) return '[]';
  if (isStruct(field)) throw new Error(`${field.name}: an optional struct field needs a tag`);
  const d = field.default;
  switch (field.type) {
    case 'bool':
      return String(d ?? false);
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      return String(d ?? 0);
    case 'int64':
      return `${d ?? '0'}n`;
    case 'string':
      return d === undefined ? "''" : `'${d.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    case 'uuid':
      return 'ZERO_UUID';
    case 'bytes':
    case 'records':
      return 'Buffer.alloc(0)';
    default:
      throw new Error(`${field.name}: no default for ${field.type}`);
  }
}

/**
 * Emits one message (and the structs inside it). `ctx` carries what is shared by the request
 * and response of one module: the struct names, the imports used.
 */
class MessageEmitter {
  constructor(message, ctx) {
    this.m = message;
    this.ctx = ctx;
  }

  /** Whether `range` (a field's versions) uses compact encodings: true, false or "flexible". */
  flexCond(field) {
    const f = this.m.flexible;
    if (field.flexible === false || f === null || field.versions[1] < f) return false;
    if (field.versions[0] >= f) return true;
    return 'flexible';
  }

  /**
   * Whether the field is nullable in the versions of one encoding (`compact` or not): true,
   * false or a condition on `version`. Splitting by encoding first keeps impossible branches
   * (a classic encoding in a flexible-only version) out of the generated code.
   */
  nullCond(field, compact) {
    if (field.nullable === undefined) return false;
    const f = this.m.flexible;
    let sub = field.versions;
    if (field.flexible !== false && f !== null) {
      sub = compact ? intersect(sub, [f, Infinity]) : intersect(sub, [-Infinity, f - 1]);
    }
    const nullable = intersect(field.nullable, sub);
    if (nullable === null) return false;
    return covers(nullable, sub) ? true : versionCond(nullable, sub);
  }

  /** Expression reading one value of primitive type `type`. */
  readPrimitive(type, compact, nullable) {
    if (type === 'string' || type === 'bytes' || type === 'records') {
      const kind = type === 'string' ? 'String' : 'Bytes';
      if (compact) return `r.compact${nullable ? 'Nullable' : ''}${kind}()`;
      return nullable ? `r.nullable${kind}()` : `r.${kind.toLowerCase()}()`;
    }
    return `r.${type}()`;
  }

  /** Expression reading a field's value in one encoding. */
  readOne(field, compact, nullable) {
    if (!isArray(field.type)) {
      // A nullable struct: int8 -1 for null, 1 before the struct (Kafka's MessageDataGenerator).
      if (isStruct(field) && nullable) return `(r.int8() < 0 ? null : read${this.ctx.structName(field)}(r, version, flexible))`;
      if (isStruct(field)) return `read${this.ctx.structName(field)}(r, version, flexible)`;
      return this.readPrimitive(field.type, compact, nullable);
    }
    const elem = isStruct(field)
      ? `read${this.ctx.structName(field)}(r, version, flexible)`
      : this.readPrimitive(elemType(field.type), compact, false);
    const method = compact ? (nullable ? 'compactNullableArray' : 'compactArray') : nullable ? 'nullableArray' : 'array';
    return `r.${method}(() => ${elem})`;
  }

  /** Expression reading a field's value, choosing the encoding at run time where versions differ. */
  readExpr(field) {
    const fc = this.flexCond(field);
    const variant = (compact) => {
      const nc = this.nullCond(field, compact);
      if (nc === true || nc === false) return this.readOne(field, compact, nc);
      return `(${nc} ? ${this.readOne(field, compact, true)} : ${this.readOne(field, compact, false)})`;
    };
    if (fc === true || fc === false) return variant(fc);
    const [a, b] = [variant(true), variant(false)];
    // Fixed-size types read the same in both encodings.
    return a === b ? a : `(flexible ? ${a} : ${b})`;
  }

  /** Statement writing `value` (an expression) in one encoding. */
  writeOne(field, value, compact, nullable, typeHasNull) {
    const elem = elemType(field.type);
    if (!isArray(field.type)) {
      if (isStruct(field) && nullable) return `if (${value} === null) w.int8(-1); else { w.int8(1); write${this.ctx.structName(field)}(w, ${value}, version, flexible); }`;
      if (isStruct(field)) return `write${this.ctx.structName(field)}(w, ${value}, version, flexible);`;
      if (typeHasNull && !nullable) value = this.nonNull(value, field);
      if (elem === 'string') {
        const method = compact ? (nullable ? 'compactNullableString' : 'compactString') : nullable ? 'nullableString' : 'string';
        return `w.${method}(${value});`;
      }
      if (elem === 'bytes' || elem === 'records') {
        const method = compact ? (nullable ? 'compactNullableBytes' : 'compactBytes') : nullable ? 'nullableBytes' : 'bytes';
        return `w.${method}(${value});`;
      }
      return `w.${elem}(${value});`;
    }
    if (typeHasNull && !nullable) value = this.nonNull(value, field);
    let item;
    if (isStruct(field)) item = `(x) => write${this.ctx.structName(field)}(w, x, version, flexible)`;
    else if (elem === 'string') item = `(x) => w.${compact ? 'compactString' : 'string'}(x)`;
    else if (elem === 'bytes') item = `(x) => w.${compact ? 'compactBytes' : 'bytes'}(x)`;
    else item = `(x) => w.${elem}(x)`;
    const method = compact ? (nullable ? 'compactNullableArray' : 'compactArray') : nullable ? 'nullableArray' : 'array';
    return `w.${method}(${value}, ${item});`;
  }

  nonNull(value, field) {
    this.ctx.use('nonNull');
    return `nonNull(${value}, '${field.name}')`;
  }

  /** Lines writing `value` with the encoding chosen at run time where the versions differ. */
  writeLines(code, field, value) {
    const fc = this.flexCond(field);
    const typeHasNull = field.nullable !== undefined;
    const byNull = (compact) => {
      const nc = this.nullCond(field, compact);
      if (nc === true || nc === false) return [this.writeOne(field, value, compact, nc, typeHasNull)];
      return [`if (${nc}) ${this.writeOne(field, value, compact, true, typeHasNull)}`, `else ${this.writeOne(field, value, compact, false, typeHasNull)}`];
    };
    const emit = (lines) => lines.forEach((l) => code.line(l));
    if (fc === true || fc === false) return emit(byNull(fc));
    const [a, b] = [byNull(true), byNull(false)];
    // Fixed-size types write the same in both encodings.
    if (a.join('\n') === b.join('\n')) return emit(a);
    code.block('if (flexible) {', () => emit(a));
    code.block('} else {', () => emit(b));
    code.line('}');
  }

  /** The value to write for a non-tagged field: the property, or its default when optional. */
  writeValue(field, within) {
    const prop = `v.${camel(field.name)}`;
    if (covers(field.versions, within)) return prop;
    const d = defaultLiteral(field);
    if (d === 'ZERO_UUID') this.ctx.use('ZERO_UUID');
    return field.nullable !== undefined ? `${prop} === undefined ? ${d} : ${prop}` : `${prop} ?? ${d}`;
  }

  /** Is a struct with versions `within` ever / always flexible? */
  structFlex(within) {
    const f = this.m.flexible;
    if (f === null || within[1] < f) return false;
    return within[0] >= f ? true : 'flexible';
  }

  /** The read and write functions of one struct (the message itself or a nested one). */
  emitCodec(code, name, fields, within) {
    const plain = fields.filter((f) => f.tag === undefined);
    const tagged = fields.filter((f) => f.tag !== undefined).sort((a, b) => a.tag - b.tag);
    const flex = this.structFlex(within);
    const flexWithin = flex === false ? null : [Math.max(within[0], this.m.flexible), within[1]];

    // read
    const body = new Code();
    for (const f of plain) {
      const cond = versionCond(f.versions, within);
      const expr = this.readExpr(f);
      body.line(`const ${local(f)} = ${cond === true ? unwrap(expr) : `${cond} ? ${expr} : undefined`};`);
    }
    for (const f of tagged) body.line(`let ${local(f)}: ${fieldType(f, this.ctx.structName)} | undefined;`);
    if (flex !== false) {
      const lines = new Code();
      if (tagged.length === 0) {
        lines.line('r.taggedFields();');
      } else {
        lines.block('r.taggedFields((tag) => {', () => {
          lines.block('switch (tag) {', () => {
            for (const f of tagged) {
              lines.block(`case ${f.tag}:`, () => {
                const cond = versionCond(f.versions, flexWithin);
                if (cond !== true) lines.line(`if (!(${cond})) return false;`);
                lines.line(`${local(f)} = ${unwrap(this.readExpr(f))};`);
                lines.line('return true;');
              });
            }
            lines.block('default:', () => lines.line('return false;'));
          });
          lines.line('}');
        });
        lines.line('});');
      }
      if (flex === true) body.append(lines);
      else {
        body.block('if (flexible) {', () => body.append(lines));
        body.line('}');
      }
    }
    const props = fields.map((f) => (local(f) === camel(f.name) ? local(f) : `${camel(f.name)}: ${local(f)}`));
    body.line(props.length === 0 ? 'return {};' : `return { ${props.join(', ')} };`);
    this.emitFunction(code, `function read${name}(r: Reader, version: number, flexible: boolean): ${name}`, body);

    // write
    const wbody = new Code();
    for (const f of plain) {
      const cond = versionCond(f.versions, within);
      const value = this.writeValue(f, within);
      if (cond === true) this.writeLines(wbody, f, value);
      else {
        wbody.block(`if (${cond}) {`, () => this.writeLines(wbody, f, value));
        wbody.line('}');
      }
    }
    if (flex !== false) {
      const lines = new Code();
      if (tagged.length === 0) {
        lines.line('w.uvarint(0);');
      } else {
        for (const f of tagged) {
          const cond = versionCond(f.versions, flexWithin);
          const prop = `v.${camel(f.name)}`;
          lines.line(`const ${local(f)} = ${cond === true ? prop : `${cond} ? ${prop} : undefined`};`);
        }
        const count = tagged.map((f) => `(${local(f)} === undefined ? 0 : 1)`);
        lines.line(`w.uvarint(${count.length === 1 ? unwrap(count[0]) : count.join(' + ')});`);
        for (const f of tagged) {
          lines.block(`if (${local(f)} !== undefined) {`, () => {
            lines.line(`const m = w.beginTagged(${f.tag});`);
            for (const l of [this.writeOne(f, local(f), true, f.nullable !== undefined, f.nullable !== undefined)]) lines.line(l);
            lines.line('w.endTagged(m);');
          });
          lines.line('}');
        }
      }
      if (flex === true) wbody.append(lines);
      else {
        wbody.block('if (flexible) {', () => wbody.append(lines));
        wbody.line('}');
      }
    }
    this.emitFunction(code, `function write${name}(w: Writer, v: ${name}, version: number, flexible: boolean): void`, wbody);
  }

  /** A function whose unused parameters get the `_` prefix noUnusedParameters and eslint expect. */
  emitFunction(code, signature, body) {
    const text = body.toString();
    let sig = signature;
    for (const p of ['r', 'w', 'v', 'version', 'flexible']) {
      if (!new RegExp(`\\b${p}\\b`).test(text)) sig = sig.replace(new RegExp(`\\(${p}:|, ${p}:`), (s) => s.replace(p, `_${p}`));
    }
    code.blank();
    code.block(`${sig} {`, () => code.append(body));
    code.line('}');
  }

  /** Interfaces of the message and its structs, in order of appearance. */
  emitInterfaces(code) {
    const max = this.m.versions[1];
    // A common struct used by two fields (ConsumerGroupDescribe's Assignment, TargetAssignment) is declared once.
    const done = new Set();
    const visit = (name, fields, within, doc) => {
      if (done.has(name)) return;
      done.add(name);
      code.blank();
      code.line(`/** ${doc} */`);
      code.block(`export interface ${name} {`, () => {
        for (const f of fields) {
          const notes = [];
          const optional = f.tag !== undefined || !covers(f.versions, within);
          if (!covers(f.versions, within)) notes.push(describeVersions(f.versions, max));
          if (f.nullable !== undefined) {
            notes.push(covers(f.nullable, f.versions) ? 'nullable' : `nullable ${describeVersions(f.nullable, max)}`);
          }
          if (f.tag !== undefined) notes.push(`tagged field ${f.tag}`);
          if (f.default !== undefined && optional) notes.push(`default ${describeDefault(f)}`);
          if (notes.length > 0) code.line(`/** ${notes.join('; ')}. */`);
          code.line(`${camel(f.name)}${optional ? '?' : ''}: ${fieldType(f, this.ctx.structName)};`);
        }
      });
      code.line('}');
      for (const f of fields) {
        if (isStruct(f)) visit(this.ctx.structName(f), f.fields, f.versions, `${elemType(f.type)} (${this.m.name}), ${describeVersions(f.versions, max)}.`);
      }
    };
    visit(this.m.name, this.m.fields, this.m.versions, `${this.m.name}, versions ${this.m.versions[0]}–${this.m.versions[1]}.`);
  }

  emitCodecs(code) {
    const done = new Set();
    const visit = (name, fields, within) => {
      if (done.has(name)) return;
      done.add(name);
      this.emitCodec(code, name, fields, within);
      for (const f of fields) if (isStruct(f)) visit(this.ctx.structName(f), f.fields, f.versions);
    };
    visit(this.m.name, this.m.fields, this.m.versions);
  }
}

/** Struct names of one module; a name used by two different structs gets its message's name as prefix. */
function structNamer(messages) {
  const seen = new Map();
  for (const m of messages) {
    const walk = (fields) => {
      for (const f of fields) {
        if (!isStruct(f)) continue;
        const n = elemType(f.type);
        if (!seen.has(n)) seen.set(n, new Set());
        seen.get(n).add(JSON.stringify(f.fields) + '@' + m.name);
        walk(f.fields);
      }
    };
    walk(m.fields);
  }
  const owner = new Map();
  for (const m of messages) {
    const walk = (fields) => {
      for (const f of fields) {
        if (!isStruct(f)) continue;
        owner.set(f, m.name);
        walk(f.fields);
      }
    };
    walk(m.fields);
  }
  const messageNames = new Set(messages.map((m) => m.name));
  return (field) => {
    const n = elemType(field.type);
    const clash = seen.get(n).size > 1 || messageNames.has(n);
    return clash ? `${owner.get(field)}${n}` : n;
  };
}

/** The whole generated module for one API summary. */
function emitApiModule(spec, generatorName) {
  if (spec.request.flexible !== spec.response.flexible) throw new Error(`${spec.name}: request and response flexible versions differ`);
  const messages = ['request', 'response'].map((k) => ({
    name: `${spec.name}${k === 'request' ? 'Request' : 'Response'}`,
    versions: spec.versions,
    flexible: spec[k].flexible,
    fields: spec[k].fields,
  }));
  const used = new Set();
  const ctx = { structName: structNamer(messages), use: (name) => used.add(name) };
  const constName = screaming(spec.name);
  const [min, max] = spec.versions;
  const flexible = spec.request.flexible;

  const code = new Code();
  for (const m of messages) new MessageEmitter(m, ctx).emitInterfaces(code);
  for (const m of messages) {
    const fn = m.name;
    code.blank();
    code.line(`/** Decode ${article(fn)} ${fn} body (the bytes after the ${fn.endsWith('Request') ? 'request' : 'response'} header) of \`version\`. */`);
    code.block(`export function decode${fn}(r: Reader, version: number): ${fn} {`, () => {
      code.line(`checkVersion(${constName}, version);`);
      code.line(`return read${fn}(r, version, ${flexible === null ? 'false' : `version >= ${flexible}`});`);
    });
    code.line('}');
    code.blank();
    code.line(`/** Encode ${article(fn)} ${fn} body of \`version\` (without the header). */`);
    code.block(`export function encode${fn}(w: Writer, v: ${fn}, version: number): void {`, () => {
      code.line(`checkVersion(${constName}, version);`);
      code.line(`write${fn}(w, v, version, ${flexible === null ? 'false' : `version >= ${flexible}`});`);
    });
    code.line('}');
  }
  for (const m of messages) new MessageEmitter(m, ctx).emitCodecs(code);

  const schemas = [spec.request.schema, spec.response.schema].map((s) => s.split('/').pop());
  const head = new Code();
  head.line(`// GENERATED by ${generatorName} from Apache Kafka's ${schemas.join(' and ')}: do not edit; run \`npm run codegen:kafka\`.`);
  head.line('/**');
  head.line(` * ${spec.name} (API key ${spec.apiKey}), versions ${min}–${max}; ${flexible === null ? 'no flexible versions' : `flexible from version ${flexible}`}.`);
  head.line(` * Schemas: Apache Kafka ${spec.request.schema.replace(/\/[^/]+$/, '/')}{${schemas.join(', ')}}`);
  head.line(` * (Apache License 2.0), summarized in scripts/kafka-codegen/spec/.`);
  head.line(' */');
  head.line(`import { ${['checkVersion', 'type KafkaApi', ...(used.has('nonNull') ? ['nonNull'] : [])].join(', ')} } from '../protocol/api';`);
  head.line("import { type Reader } from '../protocol/reader';");
  if (used.has('ZERO_UUID')) head.line("import { ZERO_UUID } from '../protocol/uuid';");
  head.line("import { type Writer } from '../protocol/writer';");
  head.blank();
  head.line(`export const ${constName}: KafkaApi = { apiKey: ${spec.apiKey}, name: '${spec.name}', minVersion: ${min}, maxVersion: ${max}, flexibleVersion: ${flexible} };`);
  head.blank();
  head.append(code);
  return head.toString();
}

module.exports = { emitApiModule, MessageEmitter, structNamer, camel, screaming };
