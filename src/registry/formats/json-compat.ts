/**
 * JSON Schema compatibility, by the difference rules Confluent documents for JSON Schema: the
 * writer's schema (the "original") is compared with the reader's (the "update"), each change has a
 * kind, and only the kinds marked compatible may appear (docs/schema-registry.md, "JSON Schema
 * rules", lists the kinds checked here). Incompatible kinds found are returned as
 * `<path>: <KIND>` messages, the names Confluent uses, so a client's error reads the same.
 *
 * Content models: an object schema is *open* when it takes any other property
 * (`additionalProperties` absent or true, no `patternProperties`), *closed* when it takes none
 * (`additionalProperties: false`), *partially open* otherwise.
 */
import { isDeepStrictEqual } from 'node:util';
import { type ParsedSchema } from './format';

type Json = Record<string, unknown>;

interface Model {
  root: unknown;
  refs: Map<string, unknown>;
}

interface Ctx {
  original: Model;
  update: Model;
  out: string[];
  /** Pairs of (original, update) schema objects already being compared: recursive `$ref`s end here. */
  seen: Map<unknown, Set<unknown>>;
}

export function jsonReadProblems(reader: ParsedSchema, writer: ParsedSchema): string[] {
  const ctx: Ctx = { original: writer.model as Model, update: reader.model as Model, out: [], seen: new Map() };
  diff(ctx, ctx.original.root, ctx.update.root, '#');
  return ctx.out;
}

/** Whether `update` reads everything `original` accepts, by the same rules (for matching subschemas). */
function compatible(ctx: Ctx, original: unknown, update: unknown): boolean {
  const sub: Ctx = { ...ctx, out: [], seen: new Map([...ctx.seen].map(([k, v]) => [k, new Set(v)])) };
  diff(sub, original, update, '#');
  return sub.out.length === 0;
}

/** `#/definitions/x`, `#/$defs/x` inside the model's root, or a referenced schema by name. */
function resolve(model: Model, s: unknown, depth = 0): unknown {
  if (depth > 32 || typeof s !== 'object' || s === null || typeof (s as Json)['$ref'] !== 'string') return s;
  const ref = (s as Json)['$ref'] as string;
  let target: unknown;
  if (ref.startsWith('#/')) {
    target = ref
      .slice(2)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Json)[k] : undefined), model.root);
  } else {
    const [name, pointer] = ref.split('#');
    target = model.refs.get(name!);
    if (pointer !== undefined && pointer !== '' && target !== undefined) target = resolve({ root: target, refs: model.refs }, { $ref: `#${pointer}` }, depth + 1);
  }
  return target === undefined ? s : resolve(model, target, depth + 1);
}

const isEmpty = (s: unknown): boolean => s === true || (typeof s === 'object' && s !== null && !Array.isArray(s) && Object.keys(s).filter((k) => !ANNOTATIONS.has(k)).length === 0);
const ANNOTATIONS = new Set(['$schema', '$id', 'id', 'title', 'description', 'default', 'examples', '$comment', 'definitions', '$defs']);
const num = (s: Json, k: string): number | undefined => (typeof s[k] === 'number' ? (s[k] as number) : undefined);

function typesOf(s: Json): Set<string> | null {
  const t = s['type'];
  if (typeof t === 'string') return new Set([t]);
  if (Array.isArray(t)) return new Set(t.filter((x): x is string => typeof x === 'string'));
  return null; // any type
}

function diff(ctx: Ctx, rawOriginal: unknown, rawUpdate: unknown, path: string): void {
  const o = resolve(ctx.original, rawOriginal);
  const u = resolve(ctx.update, rawUpdate);
  if (typeof o === 'object' && o !== null && typeof u === 'object' && u !== null) {
    const pairs = ctx.seen.get(o) ?? new Set<unknown>();
    if (pairs.has(u)) return;
    ctx.seen.set(o, pairs.add(u));
  }
  const bad = (kind: string, at = path): void => void ctx.out.push(`${at}: ${kind}`);
  if (isDeepStrictEqual(o, u)) return;
  // Anything can change to the empty schema; nothing was ever written under `false`.
  if (isEmpty(u) || o === false) return;
  if (u === false || isEmpty(o)) return bad('TYPE_NARROWED');
  if (typeof o !== 'object' || o === null || typeof u !== 'object' || u === null) return bad('TYPE_CHANGED');
  const os = o as Json;
  const us = u as Json;
  if (combined(ctx, os, us, path, bad)) return;

  const ot = typesOf(os);
  const ut = typesOf(us);
  if (ut !== null) {
    if (ot === null) return bad('TYPE_NARROWED');
    const covered = [...ot].filter((t) => ut.has(t) || (t === 'integer' && ut.has('number')));
    if (covered.length === 0) return bad('TYPE_CHANGED');
    if (covered.length < ot.size) bad('TYPE_NARROWED');
  }
  // TYPE_EXTENDED (more types read) is compatible: nothing to report.

  limit(os, us, 'maxLength', 'MAX_LENGTH', 'max', bad);
  limit(os, us, 'minLength', 'MIN_LENGTH', 'min', bad);
  if (os['pattern'] !== us['pattern']) {
    if (os['pattern'] === undefined) bad('PATTERN_ADDED');
    else if (us['pattern'] !== undefined) bad('PATTERN_CHANGED');
  }
  limit(os, us, 'maximum', 'MAXIMUM', 'max', bad);
  limit(os, us, 'minimum', 'MINIMUM', 'min', bad);
  limit(os, us, 'exclusiveMaximum', 'EXCLUSIVE_MAXIMUM', 'max', bad);
  limit(os, us, 'exclusiveMinimum', 'EXCLUSIVE_MINIMUM', 'min', bad);
  const om = num(os, 'multipleOf');
  const um = num(us, 'multipleOf');
  if (um !== undefined && om !== um) {
    if (om === undefined) bad('MULTIPLE_OF_ADDED');
    else if (!Number.isInteger(om / um)) bad(Number.isInteger(um / om) ? 'MULTIPLE_OF_EXPANDED' : 'MULTIPLE_OF_CHANGED');
  }
  enums(os, us, bad);
  objects(ctx, os, us, path, bad);
  arrays(ctx, os, us, path, bad);
}

/** A bound: `max` ones may only grow or go, `min` ones only shrink or go. */
function limit(os: Json, us: Json, k: string, kind: string, side: 'max' | 'min', bad: (kind: string) => void): void {
  const a = num(os, k);
  const b = num(us, k);
  if (b === undefined || a === b) return; // removed: relaxed
  if (a === undefined) return bad(`${kind}_ADDED`);
  if (side === 'max' && b < a) bad(`${kind}_DECREASED`);
  if (side === 'min' && b > a) bad(`${kind}_INCREASED`);
}

function enums(os: Json, us: Json, bad: (kind: string) => void): void {
  if ('const' in us && !isDeepStrictEqual(os['const'], us['const'])) return bad('ENUM_ARRAY_CHANGED');
  const a = Array.isArray(os['enum']) ? (os['enum'] as unknown[]) : null;
  const b = Array.isArray(us['enum']) ? (us['enum'] as unknown[]) : null;
  if (b === null) return; // removed or never there: extended
  if (a === null) return bad('ENUM_ARRAY_NARROWED');
  const has = (xs: unknown[], x: unknown): boolean => xs.some((y) => isDeepStrictEqual(x, y));
  const lost = a.some((x) => !has(b, x));
  const gained = b.some((x) => !has(a, x));
  if (lost) bad(gained ? 'ENUM_ARRAY_CHANGED' : 'ENUM_ARRAY_NARROWED');
}

type ContentModel = 'open' | 'closed' | 'partial';
function contentModel(s: Json): ContentModel {
  const ap = s['additionalProperties'];
  if (ap === false) return 'closed';
  if ((ap === undefined || ap === true || isEmpty(ap)) && s['patternProperties'] === undefined) return 'open';
  return 'partial';
}

/** The schema a partially open model gives a property it does not list. */
function coveringSchema(s: Json, name: string): unknown {
  const pp = s['patternProperties'];
  if (typeof pp === 'object' && pp !== null) {
    for (const [re, sub] of Object.entries(pp)) {
      try {
        if (new RegExp(re, 'u').test(name)) return sub;
      } catch {
        // An unusable pattern covers nothing.
      }
    }
  }
  const ap = s['additionalProperties'];
  return ap === undefined ? true : ap;
}

function objects(ctx: Ctx, os: Json, us: Json, path: string, bad: (kind: string, at?: string) => void): void {
  const op = (typeof os['properties'] === 'object' && os['properties'] !== null ? os['properties'] : {}) as Json;
  const up = (typeof us['properties'] === 'object' && us['properties'] !== null ? us['properties'] : {}) as Json;
  const oreq = new Set(Array.isArray(os['required']) ? (os['required'] as string[]) : []);
  const ureq = new Set(Array.isArray(us['required']) ? (us['required'] as string[]) : []);
  const hasDefault = (name: string): boolean => {
    const p = resolve(ctx.update, up[name]);
    return typeof p === 'object' && p !== null && 'default' in p;
  };
  // A required name the writer did not list is a property added (judged below), not a required attribute added.
  for (const r of ureq) if (!oreq.has(r) && r in op && !hasDefault(r)) bad('REQUIRED_ATTRIBUTE_ADDED', `${path}/required/${r}`);
  limit(os, us, 'maxProperties', 'MAX_PROPERTIES', 'max', bad);
  limit(os, us, 'minProperties', 'MIN_PROPERTIES', 'min', bad);
  const oap = os['additionalProperties'];
  const uap = us['additionalProperties'];
  const openAp = (v: unknown): boolean => v === undefined || v === true;
  if (!openAp(oap) && oap !== false && openAp(uap)) {
    // ADDITIONAL_PROPERTIES_EXTENDED: compatible
  } else if (openAp(oap) && uap === false) bad('ADDITIONAL_PROPERTIES_REMOVED');
  else if (openAp(oap) && !openAp(uap) && uap !== false) bad('ADDITIONAL_PROPERTIES_NARROWED');
  else if (typeof oap === 'object' && typeof uap === 'object') diff(ctx, oap, uap, `${path}/additionalProperties`);

  const om = contentModel(os);
  const um = contentModel(us);
  for (const [p, uSchema] of Object.entries(up)) {
    const at = `${path}/properties/${p}`;
    if (p in op) {
      diff(ctx, op[p], uSchema, at);
      continue;
    }
    // A property the reader gained: what could the writer have put under that name?
    if (om === 'open') {
      if (!isEmpty(resolve(ctx.update, uSchema))) bad('PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL', at);
    } else if (ureq.has(p) && !hasDefault(p)) bad('REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL', at);
    else if (om === 'partial' && !compatible(ctx, coveringSchema(os, p), uSchema)) bad('PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL', at);
  }
  for (const [p, oSchema] of Object.entries(op)) {
    if (p in up) continue;
    const at = `${path}/properties/${p}`;
    // A property the reader lost: what does the reader make of the writer's values under that name?
    if (um === 'closed') {
      if (resolve(ctx.original, oSchema) !== false) bad('PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL', at);
    } else if (um === 'partial' && !compatible(ctx, oSchema, coveringSchema(us, p))) bad('PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL', at);
  }
}

function arrays(ctx: Ctx, os: Json, us: Json, path: string, bad: (kind: string, at?: string) => void): void {
  limit(os, us, 'maxItems', 'MAX_ITEMS', 'max', bad);
  limit(os, us, 'minItems', 'MIN_ITEMS', 'min', bad);
  if (us['uniqueItems'] === true && os['uniqueItems'] !== true) bad('UNIQUE_ITEMS_ADDED');
  const oi = os['items'];
  const ui = us['items'];
  if (Array.isArray(oi) || Array.isArray(ui)) {
    const a = Array.isArray(oi) ? oi : [];
    const b = Array.isArray(ui) ? ui : [];
    for (let i = 0; i < Math.min(a.length, b.length); i++) diff(ctx, a[i], b[i], `${path}/items/${i}`);
    const oClosed = os['additionalItems'] === false;
    const uClosed = us['additionalItems'] === false;
    for (let i = a.length; i < b.length; i++) if (!oClosed && !isEmpty(b[i])) bad('ITEM_ADDED_TO_OPEN_CONTENT_MODEL', `${path}/items/${i}`);
    for (let i = b.length; i < a.length; i++) if (uClosed && a[i] !== false) bad('ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL', `${path}/items/${i}`);
    return;
  }
  if (ui !== undefined) diff(ctx, oi === undefined ? true : oi, ui, `${path}/items`);
}

/** anyOf / oneOf / allOf. True when the comparison was made here (the rest of `diff` is skipped). */
function combined(ctx: Ctx, os: Json, us: Json, path: string, bad: (kind: string) => void): boolean {
  const crit = (s: Json): string | null => (Array.isArray(s['anyOf']) ? 'anyOf' : Array.isArray(s['oneOf']) ? 'oneOf' : Array.isArray(s['allOf']) ? 'allOf' : null);
  const oc = crit(os);
  const uc = crit(us);
  if (oc === null && uc === null) return false;
  const subs = (s: Json, c: string): unknown[] => s[c] as unknown[];
  if (oc !== null && uc === null) {
    const only = subs(os, oc);
    if (only.length === 1) diff(ctx, only[0], us, path);
    else bad('COMBINED_TYPE_CHANGED');
    return true;
  }
  if (oc === null && uc !== null) {
    // The writer's one schema must be read by one alternative (anyOf/oneOf), or by every part (allOf).
    const alts = subs(us, uc);
    const fine = uc === 'allOf' ? alts.every((a) => compatible(ctx, os, a)) : alts.some((a) => compatible(ctx, os, a));
    if (!fine) bad('COMBINED_TYPE_CHANGED');
    return true;
  }
  const a = subs(os, oc!);
  const b = subs(us, uc!);
  const sum = (c: string): boolean => c === 'anyOf' || c === 'oneOf';
  if (oc !== uc && !(oc === 'allOf' && sum(uc!)) && !(oc === 'oneOf' && uc === 'anyOf')) {
    bad('COMBINED_TYPE_CHANGED');
    return true;
  }
  if (sum(uc!)) {
    // Every writer alternative is read by some reader alternative; the reader may have more (SUM_TYPE_EXTENDED).
    if (b.length < a.length && oc === uc) bad('SUM_TYPE_NARROWED');
    else if (!a.every((x) => b.some((y) => compatible(ctx, x, y)))) bad('COMBINED_TYPE_SUBSCHEMAS_CHANGED');
  } else {
    // allOf: every reader part holds of what the writer wrote; fewer parts are PRODUCT_TYPE_NARROWED.
    if (b.length > a.length) bad('PRODUCT_TYPE_EXTENDED');
    else if (!b.every((y) => a.some((x) => compatible(ctx, x, y)))) bad('COMBINED_TYPE_SUBSCHEMAS_CHANGED');
  }
  return true;
}
