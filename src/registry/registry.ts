/**
 * The registry's operations, as Confluent's Schema Registry defines them: subjects and their
 * versions, global ids (one per distinct schema), soft and hard deletes, references,
 * compatibility levels and modes. Each returns an Outcome; the HTTP edge (http/) maps refusals
 * to Confluent's error codes. Reads come from the metadata view; a miss first syncs the view, so a
 * schema registered through another node is found (etcd: one quorum read).
 */
import { compatibilityProblems } from './compatibility';
import { FORMATS, type ParsedSchema, type RecordDecoder, type ResolvedReference, recordDecoder } from './formats';
import { type RegistryStore, fingerprint } from './store';
import {
  COMPATIBILITY_LEVELS,
  type CompatibilityLevel,
  MODES,
  type Mode,
  type Outcome,
  type SchemaRecord,
  type SchemaReference,
  type SchemaType,
  type VersionRecord,
  ok,
  refuse,
} from './types';

/** A schema as a request gives it (register, lookup, compatibility test). */
export interface SchemaInput {
  schema: string;
  schemaType: SchemaType;
  references: SchemaReference[];
  /** IMPORT mode: the id and version to register it under. */
  id?: number;
  version?: number;
}

/** A subject's version as served (`GET /subjects/{s}/versions/{v}`, lookup). */
export interface SubjectVersion {
  subject: string;
  id: number;
  version: number;
  schemaType: SchemaType;
  schema: string;
  references: SchemaReference[];
}

/** `latest` (or -1), or a version number. */
export type VersionSpec = number | 'latest';

const MAX_VERSION = 2 ** 31 - 1;
/** Parsed schemas by fingerprint: a compatibility check parses each earlier version once. */
const PARSED_CACHE_LIMIT = 1_000;

export function parseVersionSpec(text: string): Outcome<VersionSpec> {
  if (text === 'latest' || text === '-1') return ok('latest');
  const n = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= MAX_VERSION) return ok(n);
  return refuse('invalid_version', `The specified version '${text}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string "latest"`);
}

export function parseLevel(text: unknown): CompatibilityLevel | null {
  const up = typeof text === 'string' ? text.toUpperCase() : '';
  return (COMPATIBILITY_LEVELS as readonly string[]).includes(up) ? (up as CompatibilityLevel) : null;
}

export function parseMode(text: unknown): Mode | null {
  const up = typeof text === 'string' ? text.toUpperCase() : '';
  return (MODES as readonly string[]).includes(up) ? (up as Mode) : null;
}

export interface RegistryOptions {
  /** The global compatibility level until one is set (Confluent's default: BACKWARD). */
  defaultCompatibility?: CompatibilityLevel;
}

export class SchemaRegistry {
  readonly #store: RegistryStore;
  readonly #defaultLevel: CompatibilityLevel;
  readonly #parsed = new Map<string, ParsedSchema>();
  readonly #listeners: Array<(subject: string) => Promise<void>> = [];

  constructor(store: RegistryStore, options: RegistryOptions = {}) {
    this.#store = store;
    this.#defaultLevel = options.defaultCompatibility ?? 'BACKWARD';
  }

  /**
   * Call `fn` after each change of a subject's versions made through this instance (a
   * registration that added a version, a delete). Stream schemas (svc-view.ts) follow their
   * subjects this way.
   */
  onSubjectChange(fn: (subject: string) => Promise<void>): void {
    this.#listeners.push(fn);
  }

  /** The change is answered once its listeners have followed it (a stream can be bound to a subject once it is registered). */
  async #changed<T>(subject: string, out: Outcome<T>): Promise<Outcome<T>> {
    if (out.ok) for (const fn of this.#listeners) await fn(subject);
    return out;
  }

  /** Run `read`; when it finds nothing, sync the view with the store and run it again. */
  async #fresh<T>(read: () => Outcome<T>): Promise<Outcome<T>> {
    const first = read();
    if (first.ok) return first;
    await this.#store.sync();
    return read();
  }

  subjects(opts: { deleted: boolean; prefix: string }): Promise<string[]> {
    return this.#store.sync().then(() => {
      const names = new Set<string>();
      for (const v of this.#store.allVersions()) if ((opts.deleted || !v.deleted) && v.subject.startsWith(opts.prefix)) names.add(v.subject);
      return [...names].sort();
    });
  }

  #live(subject: string, deleted: boolean): VersionRecord[] {
    return this.#store.versions(subject).filter((v) => deleted || !v.deleted);
  }

  versions(subject: string, deleted: boolean): Promise<Outcome<number[]>> {
    return this.#fresh(() => {
      const vs = this.#live(subject, deleted);
      return vs.length === 0 ? refuse('subject_not_found', `Subject '${subject}' not found.`) : ok(vs.map((v) => v.version));
    });
  }

  #find(subject: string, spec: VersionSpec, deleted: boolean): Outcome<VersionRecord> {
    const all = this.#store.versions(subject);
    if (all.length === 0) return refuse('subject_not_found', `Subject '${subject}' not found.`);
    const vs = all.filter((v) => deleted || !v.deleted);
    if (spec === 'latest') {
      const last = vs[vs.length - 1];
      return last === undefined ? refuse('subject_not_found', `Subject '${subject}' not found.`) : ok(last);
    }
    const v = vs.find((x) => x.version === spec);
    return v === undefined ? refuse('version_not_found', `Version ${spec} not found.`) : ok(v);
  }

  #served(v: VersionRecord): Outcome<SubjectVersion> {
    const s = this.#store.schemaById(v.id);
    if (s === null) return refuse('schema_not_found', `Schema ${v.id} not found`);
    return ok({ subject: v.subject, id: v.id, version: v.version, schemaType: s.schemaType, schema: s.schema, references: s.references });
  }

  version(subject: string, spec: VersionSpec, deleted: boolean): Promise<Outcome<SubjectVersion>> {
    return this.#fresh(() => {
      const v = this.#find(subject, spec, deleted);
      return v.ok ? this.#served(v.value) : v;
    });
  }

  schemaById(id: number): Promise<Outcome<SchemaRecord>> {
    return this.#fresh(() => {
      const s = this.#store.schemaById(id);
      return s === null ? refuse('schema_not_found', `Schema ${id} not found`) : ok(s);
    });
  }

  /**
   * A compiled check of records written with schema `id` (validation at the broker: the wire
   * format's payload), or the refusal when no such id (or its references) can be read.
   */
  async recordDecoder(id: number): Promise<Outcome<RecordDecoder>> {
    const s = await this.schemaById(id);
    if (!s.ok) return s;
    const parsed = this.#parse(s.value.schemaType, s.value.schema, s.value.references);
    if (!parsed.ok) return parsed;
    const refs = this.#resolveReferences(s.value.references);
    if (!refs.ok) return refs;
    try {
      return ok(recordDecoder(s.value.schemaType, parsed.value, s.value.schema, refs.value));
    } catch (err) {
      return refuse('invalid_schema', `schema ${id} cannot check records: ${(err as Error).message}`);
    }
  }

  /**
   * What compiling schema `id`'s record check takes (its type, text and resolved references), for
   * a thread that compiles it itself (a gateway thread: `buildRecordDecoder`), or the refusal.
   */
  async decoderSource(id: number): Promise<Outcome<DecoderSource>> {
    const s = await this.schemaById(id);
    if (!s.ok) return s;
    const refs = this.#resolveReferences(s.value.references);
    if (!refs.ok) return refs;
    return ok({ id, schemaType: s.value.schemaType, schema: s.value.schema, references: refs.value });
  }

  /** The subjects schema `id` is registered under in live versions (from the node's view). */
  subjectsOf(id: number): Set<string> {
    const out = new Set<string>();
    for (const v of this.#store.allVersions()) if (v.id === id && !v.deleted) out.add(v.subject);
    return out;
  }

  /** The subject-versions an id is registered as. */
  async idVersions(id: number, deleted: boolean): Promise<Outcome<Array<{ subject: string; version: number }>>> {
    const s = await this.schemaById(id);
    if (!s.ok) return s;
    return ok(this.#store.allVersions().filter((v) => v.id === id && (deleted || !v.deleted)).map((v) => ({ subject: v.subject, version: v.version })));
  }

  /** Ids of the schemas that reference this version. */
  async referencedBy(subject: string, spec: VersionSpec): Promise<Outcome<number[]>> {
    const v = await this.#fresh(() => this.#find(subject, spec, false));
    if (!v.ok) return v;
    return ok(this.#referrers(subject, v.value.version));
  }

  #referrers(subject: string, version: number): number[] {
    const users = new Set<number>();
    const liveIds = new Set(this.#store.allVersions().filter((x) => !x.deleted).map((x) => x.id));
    for (const s of this.#store.schemas()) if (liveIds.has(s.id) && s.references.some((r) => r.subject === subject && r.version === version)) users.add(s.id);
    return [...users].sort((a, b) => a - b);
  }

  /** Referenced schemas, deepest first, each once by name. */
  #resolveReferences(refs: readonly SchemaReference[], into: ResolvedReference[] = [], depth = 0): Outcome<ResolvedReference[]> {
    if (depth > 32) return refuse('invalid_schema', 'Invalid schema: references nest deeper than 32');
    for (const r of refs) {
      if (typeof r?.name !== 'string' || typeof r.subject !== 'string' || !Number.isInteger(r.version)) return refuse('invalid_schema', 'Invalid schema: a reference is {name, subject, version}');
      const v = this.#find(r.subject, r.version === -1 ? 'latest' : r.version, false);
      if (!v.ok) return refuse('invalid_schema', `Invalid schema: reference ${r.name} (subject ${r.subject}, version ${r.version}) not found`);
      const s = this.#store.schemaById(v.value.id);
      if (s === null) return refuse('invalid_schema', `Invalid schema: reference ${r.name} not found`);
      const nested = this.#resolveReferences(s.references, into, depth + 1);
      if (!nested.ok) return nested;
      if (!into.some((x) => x.name === r.name)) into.push({ name: r.name, schema: s.schema });
    }
    return ok(into);
  }

  #parse(type: SchemaType, text: string, refs: readonly SchemaReference[]): Outcome<ParsedSchema> {
    const key = fingerprint(type, text, refs);
    const cached = this.#parsed.get(key);
    if (cached !== undefined) return ok(cached);
    const resolved = this.#resolveReferences(refs);
    if (!resolved.ok) return resolved;
    const p = FORMATS[type].parse(text, resolved.value);
    if (!p.ok) return refuse('invalid_schema', p.message);
    if (this.#parsed.size >= PARSED_CACHE_LIMIT) this.#parsed.delete(this.#parsed.keys().next().value!);
    this.#parsed.set(key, p);
    return ok(p);
  }

  /** Parse a request's schema; `text` is what is stored: canonical, or the normalized form. */
  #candidate(input: SchemaInput, normalize: boolean): Outcome<{ parsed: ParsedSchema; text: string }> {
    const p = this.#parse(input.schemaType, input.schema, input.references);
    if (!p.ok) return p;
    return ok({ parsed: p.value, text: normalize ? p.value.normalized : p.value.canonical });
  }

  /** The earlier live versions of a subject, parsed, oldest first. */
  #earlier(subject: string): Outcome<Array<{ version: number; parsed: ParsedSchema; type: SchemaType }>> {
    const out: Array<{ version: number; parsed: ParsedSchema; type: SchemaType }> = [];
    for (const v of this.#live(subject, false)) {
      const s = this.#store.schemaById(v.id);
      if (s === null) continue;
      const p = this.#parse(s.schemaType, s.schema, s.references);
      if (!p.ok) continue; // stored before: parsed then; a referenced version since hard-deleted cannot be checked against
      out.push({ version: v.version, parsed: p.value, type: s.schemaType });
    }
    return ok(out);
  }

  #problems(subject: string, type: SchemaType, candidate: ParsedSchema, against?: VersionRecord): string[] {
    const earlier = this.#earlier(subject);
    if (!earlier.ok) return [];
    const sameType = earlier.value.filter((e) => against === undefined || e.version === against.version);
    const other = sameType.find((e) => e.type !== type);
    if (other !== undefined) return [`{version: ${other.version}, problem: the schema type changes from ${other.type} to ${type}}`];
    const level = against === undefined ? this.effectiveCompatibility(subject) : this.effectiveCompatibility(subject) === 'NONE' ? 'NONE' : nonTransitive(this.effectiveCompatibility(subject));
    return compatibilityProblems(type, level, candidate, sameType);
  }

  effectiveCompatibility(subject: string | null): CompatibilityLevel {
    return (subject === null ? null : this.#store.compatibility(subject)) ?? this.#store.compatibility(null) ?? this.#defaultLevel;
  }

  effectiveMode(subject: string | null): Mode {
    return (subject === null ? null : this.#store.mode(subject)) ?? this.#store.mode(null) ?? 'READWRITE';
  }

  /** POST /subjects/{s}/versions: the id of the schema (registered under the subject as a new version unless it is its live version already). */
  async register(subject: string, input: SchemaInput, normalize: boolean): Promise<Outcome<{ id: number; version: number }>> {
    await this.#store.sync();
    const mode = this.effectiveMode(subject);
    if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') return refuse('operation_not_permitted', `Subject ${subject} is in read-only mode`);
    if ((input.id !== undefined || input.version !== undefined) && mode !== 'IMPORT') {
      return refuse('operation_not_permitted', 'Overwrite new schema is not permitted: an id or version is given only in IMPORT mode');
    }
    const c = this.#candidate(input, normalize);
    if (!c.ok) return c;
    for (let attempt = 0; attempt < 16; attempt++) {
      const live = this.#live(subject, false);
      // The same schema registered again under the subject: its id and version, nothing new.
      const fp = this.#store.schemaByFingerprint(fingerprint(input.schemaType, c.value.text, input.references));
      const same = fp === null ? undefined : live.find((v) => v.id === fp.id);
      if (same !== undefined) return ok({ id: same.id, version: same.version });
      if (mode !== 'IMPORT') {
        const problems = this.#problems(subject, input.schemaType, c.value.parsed);
        if (problems.length > 0) {
          return refuse('incompatible_schema', `Schema being registered is incompatible with an earlier schema for subject "${subject}", details: [${problems.join(', ')}]`);
        }
      }
      const id = await this.#store.idFor(input.schemaType, c.value.text, input.references, input.id);
      if (!id.ok) return refuse('operation_not_permitted', `Overwrite new schema with id ${input.id} is not permitted: id ${id.takenBy} is another schema`);
      const all = this.#store.versions(subject);
      const version = input.version ?? (all.length === 0 ? 1 : all[all.length - 1]!.version + 1);
      if (await this.#store.addVersion({ subject, version, id: id.id, deleted: false })) return await this.#changed(subject, ok({ id: id.id, version }));
      if (input.version !== undefined) return refuse('operation_not_permitted', `Version ${input.version} of subject ${subject} exists already`);
      // Another writer took that version: look again (it may have registered this very schema).
      await this.#store.sync();
    }
    return refuse('store_unavailable', `Registering under subject ${subject} kept conflicting with other writers; try again`);
  }

  /** POST /subjects/{s}: the subject's version holding this schema. */
  async lookup(subject: string, input: SchemaInput, normalize: boolean, deleted: boolean): Promise<Outcome<SubjectVersion>> {
    const c = this.#candidate(input, normalize);
    if (!c.ok) return c;
    return this.#fresh(() => {
      const vs = this.#live(subject, deleted);
      if (vs.length === 0) return refuse('subject_not_found', `Subject '${subject}' not found.`);
      const s = this.#store.schemaByFingerprint(fingerprint(input.schemaType, c.value.text, input.references));
      // Registered without normalize, looked up with it (or the other way): compare the normalized forms too.
      const match = vs.filter((v) => v.id === s?.id || this.#normalizedEqual(v.id, input.schemaType, c.value.parsed.normalized, input.references)).pop();
      return match === undefined ? refuse('schema_not_found', 'Schema not found') : this.#served(match);
    });
  }

  #normalizedEqual(id: number, type: SchemaType, normalized: string, refs: readonly SchemaReference[]): boolean {
    const s = this.#store.schemaById(id);
    if (s === null || s.schemaType !== type) return false;
    const p = this.#parse(s.schemaType, s.schema, s.references);
    return p.ok && p.value.normalized === normalized && JSON.stringify(s.references) === JSON.stringify(refs);
  }

  /** POST /compatibility/subjects/{s}/versions[/{v}]: problems against that version, or per the level when none is named. */
  async testCompatibility(subject: string, spec: VersionSpec | null, input: SchemaInput): Promise<Outcome<string[]>> {
    await this.#store.sync();
    const c = this.#candidate(input, false);
    if (!c.ok) return c;
    if (spec === null) return ok(this.#problems(subject, input.schemaType, c.value.parsed));
    const v = this.#find(subject, spec, false);
    if (!v.ok) return v;
    return ok(this.#problems(subject, input.schemaType, c.value.parsed, v.value));
  }

  async deleteSubject(subject: string, permanent: boolean): Promise<Outcome<number[]>> {
    await this.#store.sync();
    const mode = this.effectiveMode(subject);
    if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') return refuse('operation_not_permitted', `Subject ${subject} is in read-only mode`);
    const all = this.#store.versions(subject);
    if (all.length === 0) return refuse('subject_not_found', `Subject '${subject}' not found.`);
    const live = all.filter((v) => !v.deleted);
    for (const v of permanent ? all : live) {
      const users = this.#referrers(subject, v.version);
      if (users.length > 0) return refuse('reference_exists', `One or more references exist to the schema {subject=${subject},version=${v.version}}: ids ${users.join(', ')}`);
    }
    if (permanent) {
      if (live.length > 0) return refuse('subject_not_soft_deleted', `Subject '${subject}' was not deleted first before being permanently deleted`);
      for (const v of all) await this.#store.hardDelete(subject, v.version);
      await this.#store.setCompatibility(subject, null);
      await this.#store.setMode(subject, null);
      return await this.#changed(subject, ok(all.map((v) => v.version)));
    }
    if (live.length === 0) return refuse('subject_soft_deleted', `Subject '${subject}' was soft deleted.Set permanent=true to delete permanently`);
    for (const v of live) await this.#store.softDelete(subject, v.version);
    return await this.#changed(subject, ok(live.map((v) => v.version)));
  }

  async deleteVersion(subject: string, spec: VersionSpec, permanent: boolean): Promise<Outcome<number>> {
    await this.#store.sync();
    const mode = this.effectiveMode(subject);
    if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') return refuse('operation_not_permitted', `Subject ${subject} is in read-only mode`);
    // Soft-deleted versions are found too: a second soft delete is 40406, a hard delete needs one.
    const v = this.#find(subject, spec, spec === 'latest' ? permanent : true);
    if (!v.ok) return v;
    const users = this.#referrers(subject, v.value.version);
    if (users.length > 0) return refuse('reference_exists', `One or more references exist to the schema {subject=${subject},version=${v.value.version}}: ids ${users.join(', ')}`);
    if (permanent) {
      if (!v.value.deleted) return refuse('version_not_soft_deleted', `Subject '${subject}' Version ${v.value.version} was not deleted first before being permanently deleted`);
      await this.#store.hardDelete(subject, v.value.version);
      return await this.#changed(subject, ok(v.value.version));
    }
    if (v.value.deleted) return refuse('version_soft_deleted', `Subject '${subject}' Version ${v.value.version} was soft deleted.Set permanent=true to delete permanently`);
    await this.#store.softDelete(subject, v.value.version);
    return await this.#changed(subject, ok(v.value.version));
  }

  /** GET /config[/{s}]: the subject's own level (or, with defaultToGlobal, the effective one). */
  async compatibility(subject: string | null, defaultToGlobal: boolean): Promise<Outcome<CompatibilityLevel>> {
    await this.#store.sync();
    if (subject === null) return ok(this.effectiveCompatibility(null));
    const own = this.#store.compatibility(subject);
    if (own !== null) return ok(own);
    if (defaultToGlobal) return ok(this.effectiveCompatibility(null));
    return refuse('subject_compatibility_not_configured', `Subject '${subject}' does not have subject-level compatibility configured`);
  }

  async setCompatibility(subject: string | null, level: unknown): Promise<Outcome<CompatibilityLevel>> {
    const l = parseLevel(level);
    if (l === null) return refuse('invalid_compatibility_level', 'Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive');
    await this.#store.setCompatibility(subject, l);
    return ok(l);
  }

  /** DELETE /config[/{s}]: the level it had. */
  async deleteCompatibility(subject: string | null): Promise<Outcome<CompatibilityLevel>> {
    await this.#store.sync();
    const before = this.effectiveCompatibility(subject);
    if (subject !== null && this.#store.compatibility(subject) === null && this.#store.versions(subject).length === 0) return refuse('subject_not_found', `Subject '${subject}' not found.`);
    await this.#store.setCompatibility(subject, null);
    return ok(before);
  }

  async mode(subject: string | null, defaultToGlobal: boolean): Promise<Outcome<Mode>> {
    await this.#store.sync();
    if (subject === null) return ok(this.effectiveMode(null));
    const own = this.#store.mode(subject);
    if (own !== null) return ok(own);
    if (defaultToGlobal) return ok(this.effectiveMode(null));
    return refuse('subject_mode_not_configured', `Subject '${subject}' does not have subject-level mode configured`);
  }

  async setMode(subject: string | null, mode: unknown, force: boolean): Promise<Outcome<Mode>> {
    const m = parseMode(mode);
    if (m === null) return refuse('invalid_mode', 'Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT');
    await this.#store.sync();
    if (m === 'IMPORT' && !force) {
      const existing = subject === null ? this.#store.allVersions() : this.#store.versions(subject);
      if (existing.length > 0) return refuse('operation_not_permitted', 'Cannot import since found existing subjects (set force=true to switch anyway)');
    }
    await this.#store.setMode(subject, m);
    return ok(m);
  }

  async deleteMode(subject: string | null): Promise<Outcome<Mode>> {
    await this.#store.sync();
    const before = this.effectiveMode(subject);
    await this.#store.setMode(subject, null);
    return ok(before);
  }
}

/** A test against one named version uses the level's direction without its transitivity. */
function nonTransitive(level: CompatibilityLevel): CompatibilityLevel {
  return level.replace('_TRANSITIVE', '') as CompatibilityLevel;
}

/** A schema with its references resolved: what a record check is compiled from (SchemaRegistry.decoderSource). */
export interface DecoderSource {
  id: number;
  schemaType: SchemaType;
  schema: string;
  references: ResolvedReference[];
}

/** Compile a record check from its source, on any thread (the registry's own `recordDecoder` is the same, from its store). */
export function buildRecordDecoder(src: DecoderSource): Outcome<RecordDecoder> {
  const parsed = FORMATS[src.schemaType].parse(src.schema, src.references);
  if (!parsed.ok) return refuse('invalid_schema', parsed.message);
  try {
    return ok(recordDecoder(src.schemaType, parsed, src.schema, src.references));
  } catch (err) {
    return refuse('invalid_schema', `schema ${src.id} cannot check records: ${(err as Error).message}`);
  }
}
