/**
 * The registry's records in the node's metadata store (the embedded store, or etcd shared by a
 * cluster's nodes), so ids, subjects and versions are the same on every node and after restarts.
 * Every write is a single-key compare-and-set or create-only put: two nodes never hand out one
 * id, nor one version of a subject, twice.
 *
 *   schema-registry/next-id                    {next}                 ids: compare-and-set counter
 *   schema-registry/fp/<sha-256>               SchemaRecord           one id per distinct schema: create-only
 *   schema-registry/id/<id:010d>               {fp}                   the id's schema
 *   schema-registry/v/<subject>/<version:010d> VersionRecord          create-only, then soft delete by CAS
 *   schema-registry/config, …/mode             {compatibilityLevel} / {mode}
 *   schema-registry/subject-config/<subject>, schema-registry/subject-mode/<subject>
 *
 * `<subject>` is percent-encoded (so a `/` in a subject name cannot reach into another key).
 * Registering a new schema: id allocated (CAS on next-id) → fp record create-only (losing that
 * race, the winner's id is taken and the allocated one stays unused) → id record → version record.
 * A reader reaches an id only from a version record or a register answer, both written after it.
 */
import { createHash } from 'node:crypto';
import { MetaConflictError, type MetaStore, withinRequestDeadline } from '../actors';
import { type CompatibilityLevel, type Mode, type SchemaRecord, type SchemaReference, type SchemaType, type VersionRecord } from './types';

const P = 'schema-registry/';
const pad = (n: number): string => String(n).padStart(10, '0');
const enc = (subject: string): string => encodeURIComponent(subject);
const versionPrefix = (subject: string): string => `${P}v/${enc(subject)}/`;

/** The identity of a schema: type, text as stored, references. */
export function fingerprint(schemaType: SchemaType, schema: string, references: readonly SchemaReference[]): string {
  return createHash('sha256').update(JSON.stringify([schemaType, schema, references.map((r) => [r.name, r.subject, r.version])])).digest('hex');
}

export class RegistryStore {
  readonly #meta: MetaStore;

  constructor(meta: MetaStore) {
    this.#meta = meta;
  }

  /**
   * Bring the view up to every write acknowledged anywhere (etcd: one quorum read; local: at once),
   * within the request deadline: without etcd's quorum the client hears 50001 in time, not after 10 s.
   */
  sync(): Promise<void> {
    return withinRequestDeadline(this.#meta.sync(), "the schema registry's read");
  }

  schemaByFingerprint(fp: string): SchemaRecord | null {
    return this.#meta.get<SchemaRecord>(`${P}fp/${fp}`)?.value ?? null;
  }

  schemaById(id: number): SchemaRecord | null {
    const ref = this.#meta.get<{ fp: string }>(`${P}id/${pad(id)}`);
    return ref === null ? null : this.schemaByFingerprint(ref.value.fp);
  }

  /** Every schema, by id. */
  schemas(): SchemaRecord[] {
    return this.#meta
      .list<{ fp: string }>(`${P}id/`)
      .map((r) => this.schemaByFingerprint(r.value.fp))
      .filter((s): s is SchemaRecord => s !== null);
  }

  /** A subject's versions, soft-deleted ones included, oldest first. */
  versions(subject: string): VersionRecord[] {
    return this.#meta.list<VersionRecord>(versionPrefix(subject)).map((r) => r.value);
  }

  /** Every version record of every subject (subjects in key order). */
  allVersions(): VersionRecord[] {
    return this.#meta.list<VersionRecord>(`${P}v/`).map((r) => r.value);
  }

  /**
   * The id of this schema: the existing one when the same schema was registered before (under
   * any subject), else a new one. `wanted` (IMPORT mode) asks for a given id.
   */
  async idFor(schemaType: SchemaType, schema: string, references: SchemaReference[], wanted?: number): Promise<{ ok: true; id: number } | { ok: false; takenBy: number }> {
    const fp = fingerprint(schemaType, schema, references);
    const existing = this.schemaByFingerprint(fp);
    if (existing !== null) {
      if (wanted !== undefined && wanted !== existing.id) return { ok: false, takenBy: existing.id };
      await this.#ensureIdRecord(existing.id, fp);
      return { ok: true, id: existing.id };
    }
    let id: number;
    if (wanted !== undefined) {
      if (this.schemaById(wanted) !== null) return { ok: false, takenBy: wanted };
      id = wanted;
      await this.#raiseNextId(wanted + 1);
    } else id = await this.#allocateId();
    try {
      await this.#meta.put<SchemaRecord>(`${P}fp/${fp}`, { id, schemaType, schema, references }, { absent: true });
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      // Another request (here or on another node) registered the same schema first: its id is the id.
      const winner = this.schemaByFingerprint(fp)!;
      await this.#ensureIdRecord(winner.id, fp);
      return { ok: true, id: winner.id };
    }
    await this.#ensureIdRecord(id, fp);
    return { ok: true, id };
  }

  async #ensureIdRecord(id: number, fp: string): Promise<void> {
    if (this.#meta.get(`${P}id/${pad(id)}`) !== null) return;
    try {
      await this.#meta.put(`${P}id/${pad(id)}`, { fp }, { absent: true });
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
    }
  }

  /** The next id, by compare-and-set on the counter (retried when another writer moved it). */
  async #allocateId(): Promise<number> {
    for (;;) {
      const cur = this.#meta.get<{ next: number }>(`${P}next-id`);
      const next = cur?.value.next ?? 1;
      try {
        await this.#meta.put(`${P}next-id`, { next: next + 1 }, cur === null ? { absent: true } : { version: cur.version });
        return next;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
        await this.#meta.sync();
      }
    }
  }

  /** IMPORT mode: ids handed out later start above every imported one. */
  async #raiseNextId(atLeast: number): Promise<void> {
    for (;;) {
      const cur = this.#meta.get<{ next: number }>(`${P}next-id`);
      if (cur !== null && cur.value.next >= atLeast) return;
      try {
        await this.#meta.put(`${P}next-id`, { next: atLeast }, cur === null ? { absent: true } : { version: cur.version });
        return;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
        await this.#meta.sync();
      }
    }
  }

  /** Write version `version` of `subject` create-only: false when that version exists already (another writer took it). */
  async addVersion(record: VersionRecord): Promise<boolean> {
    try {
      await this.#meta.put<VersionRecord>(`${versionPrefix(record.subject)}${pad(record.version)}`, record, { absent: true });
      return true;
    } catch (err) {
      if (err instanceof MetaConflictError) return false;
      throw err;
    }
  }

  /** Mark a version soft-deleted (compare-and-set on the record as read). */
  async softDelete(subject: string, version: number): Promise<boolean> {
    const key = `${versionPrefix(subject)}${pad(version)}`;
    const cur = this.#meta.get<VersionRecord>(key);
    if (cur === null || cur.value.deleted) return false;
    try {
      await this.#meta.put<VersionRecord>(key, { ...cur.value, deleted: true }, { version: cur.version });
      return true;
    } catch (err) {
      if (err instanceof MetaConflictError) return false;
      throw err;
    }
  }

  /** Remove a version record for good (hard delete). The schema's id record stays: ids are never handed out again. */
  async hardDelete(subject: string, version: number): Promise<boolean> {
    return this.#meta.delete(`${versionPrefix(subject)}${pad(version)}`);
  }

  compatibility(subject: string | null): CompatibilityLevel | null {
    return this.#meta.get<{ compatibilityLevel: CompatibilityLevel }>(subject === null ? `${P}config` : `${P}subject-config/${enc(subject)}`)?.value.compatibilityLevel ?? null;
  }

  async setCompatibility(subject: string | null, level: CompatibilityLevel | null): Promise<void> {
    const key = subject === null ? `${P}config` : `${P}subject-config/${enc(subject)}`;
    if (level === null) await this.#meta.delete(key);
    else await this.#meta.put(key, { compatibilityLevel: level });
  }

  mode(subject: string | null): Mode | null {
    return this.#meta.get<{ mode: Mode }>(subject === null ? `${P}mode` : `${P}subject-mode/${enc(subject)}`)?.value.mode ?? null;
  }

  async setMode(subject: string | null, mode: Mode | null): Promise<void> {
    const key = subject === null ? `${P}mode` : `${P}subject-mode/${enc(subject)}`;
    if (mode === null) await this.#meta.delete(key);
    else await this.#meta.put(key, { mode });
  }
}

