/**
 * The Svc protocol's stream schemas (`/_schemas/{name}`, the `Svc-Schema` binding) as a view of
 * the registry (docs/schema-registry.md, "Stream schemas"): the schema named N is the JSON subject
 * `svc-N`, its registration the subject's latest live version, its version that version's number.
 *
 *   PUT /_schemas/N ──▶ register under svc-N (a new subject gets compatibility NONE, as a
 *                       replacement through /_schemas was never checked) ──▶ the stream store
 *                       (this node's files, or a cluster's shared records) takes it with the
 *                       subject's version ──▶ every shard worker validates with it
 *   Confluent API / admin API change of svc-N ──▶ the same store follows the subject's latest live version
 *   start ──▶ registrations of a data directory (or a cluster) from before the view: imported
 *             into the registry under their version (IMPORT mode for that subject only); subjects
 *             `svc-*` the store lacks: taken into it. Both idempotent.
 *
 * The stream store stays what the workers start from and what a DELETE asks (a stream bound to
 * the schema refuses it): the registry holds ids and versions, the store the copy each node
 * validates with. Imports nothing from the data plane: the store and its checks are passed in.
 */
import { SvcError } from '../errors';
import { type SchemaRegistry } from './registry';
import { type Refusal } from './types';

/** Subject of the stream schema `name`. */
export const SVC_SUBJECT_PREFIX = 'svc-';
export const svcSubject = (name: string): string => SVC_SUBJECT_PREFIX + name;

/** A stream schema registration, as the stream store holds it (src/shards SchemaDocument). */
export interface SvcSchemaDoc {
  name: string;
  type: string;
  schema: unknown;
  version: number;
}

/** The stream store (src/shards `Schemas`): this node's files or a cluster's shared records. */
export interface SvcSchemaStore<D extends SvcSchemaDoc, C> {
  documents(): D[];
  has(name: string): boolean;
  get(name: string): D;
  put(name: string, body: unknown, options?: { version?: number }): Promise<{ created: boolean; doc: D }>;
  delete(name: string): Promise<void>;
  attach(channel: C): void;
}

export interface SvcViewDeps {
  /** Check a registration document (src/shards parseRegistration): its type and schema, or a throw. */
  parse(name: string, body: unknown): { type: string; schema: unknown };
  /** Check a schema name (src/shards checkSchemaName): a throw when it is not one. */
  checkName(name: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const isName = (deps: SvcViewDeps, name: string): boolean => {
  try {
    deps.checkName(name);
    return true;
  } catch {
    return false;
  }
};

/** A registry refusal as the Svc protocol's error. */
function svcError(r: Refusal): SvcError {
  if (r.kind === 'invalid_schema') return new SvcError('invalid_schema', r.message);
  if (r.kind === 'store_unavailable') return new SvcError('storage_unavailable', r.message);
  return new SvcError('conflict', r.message);
}

export class SvcSchemaView<D extends SvcSchemaDoc, C> implements SvcSchemaStore<D, C> {
  readonly #registry: SchemaRegistry;
  readonly #store: SvcSchemaStore<D, C>;
  readonly #deps: SvcViewDeps;
  /** Writes through this view run one at a time (the registry's order is the store's). */
  #tail: Promise<unknown> = Promise.resolve();
  /** Names this view is writing: the registry's change events for them are its own. */
  readonly #writing = new Set<string>();

  constructor(registry: SchemaRegistry, store: SvcSchemaStore<D, C>, deps: SvcViewDeps) {
    this.#registry = registry;
    this.#store = store;
    this.#deps = deps;
    registry.onSubjectChange(async (subject) => {
      if (!subject.startsWith(SVC_SUBJECT_PREFIX)) return;
      const name = subject.slice(SVC_SUBJECT_PREFIX.length);
      if (this.#writing.has(name) || !isName(deps, name)) return;
      await this.#serial(() => this.#follow(name)).catch((err: unknown) => deps.warn({ err, subject }, 'stream schema not updated from its subject'));
    });
  }

  /**
   * Bring the registry and the store together at start: registrations the registry lacks are
   * imported under their version; subjects `svc-*` the store lacks, or holds at another version, are taken into it.
   */
  async open(): Promise<void> {
    await this.#serial(async () => {
      for (const doc of this.#store.documents()) {
        const latest = await this.#registry.version(svcSubject(doc.name), 'latest', false);
        if (!latest.ok && latest.kind === 'subject_not_found') {
          // A registration the registry refuses (its JSON Schema rules differ in places) keeps working as before: validated with, not a subject.
          await this.#import(doc).catch((err: unknown) => this.#deps.warn({ err, subject: svcSubject(doc.name) }, 'stream schema not imported into the registry'));
        } else await this.#followOrWarn(doc.name);
      }
      for (const subject of await this.#registry.subjects({ deleted: false, prefix: SVC_SUBJECT_PREFIX })) {
        const name = subject.slice(SVC_SUBJECT_PREFIX.length);
        if (isName(this.#deps, name) && !this.#store.has(name)) await this.#followOrWarn(name);
      }
    });
  }

  documents(): D[] {
    return this.#store.documents();
  }

  has(name: string): boolean {
    return this.#store.has(name);
  }

  get(name: string): D {
    return this.#store.get(name);
  }

  attach(channel: C): void {
    this.#store.attach(channel);
  }

  /** Register under `svc-<name>`, then give the store the registration with the subject's version. */
  put(name: string, body: unknown): Promise<{ created: boolean; doc: D }> {
    this.#deps.checkName(name);
    const { schema } = this.#deps.parse(name, body);
    return this.#serial(() =>
      this.#as(name, async () => {
        const version = await this.#register(svcSubject(name), JSON.stringify(schema));
        return this.#store.put(name, body, { version });
      }),
    );
  }

  /** The store first (409 while a stream is bound), then the subject: soft, then permanent. */
  delete(name: string): Promise<void> {
    this.#deps.checkName(name);
    return this.#serial(() =>
      this.#as(name, async () => {
        await this.#store.delete(name);
        const subject = svcSubject(name);
        const soft = await this.#registry.deleteSubject(subject, false);
        if (!soft.ok && soft.kind !== 'subject_not_found' && soft.kind !== 'subject_soft_deleted') throw svcError(soft);
        const hard = await this.#registry.deleteSubject(subject, true);
        if (!hard.ok && hard.kind !== 'subject_not_found') throw svcError(hard);
      }),
    );
  }

  async #register(subject: string, text: string): Promise<number> {
    const live = await this.#registry.versions(subject, false);
    if (!live.ok) {
      // A new subject: /_schemas never checked a replacement, so neither does its subject (unless a level was set for it).
      const level = await this.#registry.compatibility(subject, false);
      if (!level.ok) await this.#registry.setCompatibility(subject, 'NONE');
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const r = await this.#registry.register(subject, { schema: text, schemaType: 'JSON', references: [] }, false);
      if (!r.ok) throw svcError(r);
      const latest = await this.#registry.version(subject, 'latest', false);
      if (!latest.ok || latest.value.version <= r.value.version) return r.value.version;
      // An earlier version holds this schema: it becomes the latest again as a new version (the earlier one is soft-deleted).
      const gone = await this.#registry.deleteVersion(subject, r.value.version, false);
      if (!gone.ok) throw svcError(gone);
    }
    throw new SvcError('conflict', `subject ${subject} kept changing while it was being registered; try again`);
  }

  /** A registration from before the view: under its own version, in IMPORT mode for its subject alone. */
  async #import(doc: D): Promise<void> {
    const subject = svcSubject(doc.name);
    const level = await this.#registry.compatibility(subject, false);
    if (!level.ok) await this.#registry.setCompatibility(subject, 'NONE');
    const mode = await this.#registry.setMode(subject, 'IMPORT', true);
    if (!mode.ok) throw svcError(mode);
    try {
      const r = await this.#as(doc.name, () => this.#registry.register(subject, { schema: JSON.stringify(doc.schema), schemaType: 'JSON', references: [], version: doc.version }, false));
      // Another node imported it at the same time: the version is there.
      if (!r.ok && r.kind !== 'operation_not_permitted') throw svcError(r);
    } finally {
      await this.#registry.deleteMode(subject);
    }
  }

  /** The store takes the subject's latest live version (or drops the schema when the subject has none). */
  async #follow(name: string): Promise<void> {
    const subject = svcSubject(name);
    const latest = await this.#registry.version(subject, 'latest', false);
    if (!latest.ok) {
      if (latest.kind !== 'subject_not_found') throw svcError(latest);
      if (this.#store.has(name)) {
        await this.#store.delete(name).catch((err: unknown) => {
          // A stream is bound to it: it keeps validating with the last version until unbound.
          this.#deps.warn({ err, subject }, 'subject deleted, but its stream schema is kept while a stream is bound to it');
        });
      }
      return;
    }
    const v = latest.value;
    if (v.schemaType !== 'JSON' || v.references.length > 0) {
      this.#deps.warn({ subject, version: v.version }, 'a stream schema subject holds a schema other than JSON without references: not taken as the stream schema');
      return;
    }
    const cur = this.#store.has(name) ? this.#store.get(name) : null;
    if (cur !== null && cur.version === v.version && JSON.stringify(cur.schema) === v.schema) return;
    await this.#store.put(name, { type: 'json-schema', schema: JSON.parse(v.schema) as unknown }, { version: v.version });
  }

  /** At start: a subject the store cannot take (a schema Svc's validator refuses) does not stop the node. */
  async #followOrWarn(name: string): Promise<void> {
    await this.#follow(name).catch((err: unknown) => this.#deps.warn({ err, subject: svcSubject(name) }, 'stream schema not taken from its subject'));
  }

  async #as<T>(name: string, f: () => Promise<T>): Promise<T> {
    this.#writing.add(name);
    try {
      return await f();
    } finally {
      this.#writing.delete(name);
    }
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(f, f);
    this.#tail = run.catch(() => undefined);
    return run;
  }
}
