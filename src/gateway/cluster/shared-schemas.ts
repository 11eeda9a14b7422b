/**
 * The stream schema registry of a cluster (the gateway's: it joins the metadata store and the shard workers) (`PUT /_schemas/{name}`, docs/protocol.md "Schemas";
 * docs/cluster.md, "Schemas and topic configs"): one registration per schema in the shared
 * metadata, so every node validates appends and answers reads the same, wherever a stream lives.
 *
 *   PUT/DELETE on any node ──▶ stream-schemas/<name> (compare-and-set on the record's version;
 *                              a delete writes a tombstone, so its revision is known to wait for)
 *        every node's watch ──▶ its shard workers apply the change (control message, as single-node)
 *                          ──▶ stream-schemas-applied/<nodeId> {revision, bound} (its acknowledgement)
 *   the writing node answers once every live node acknowledged the write's revision
 *
 * So "on the next request": once a PUT is answered, every live node's workers validate with the
 * new version; a node that starts later loads the registry from the metadata before it serves.
 * A node that does not acknowledge within the deadline (cut off from etcd, it will lose its lease)
 * makes the PUT answer 503 `storage_unavailable`: the registration is stored, and repeating the
 * PUT (idempotent) waits again. A DELETE of a schema a stream is bound to on any node is undone
 * (the node's acknowledgement names the stream) and answered 409, as on a single node.
 *
 * Schema files a node has in `<dataDir>/schemas/` from before it joined a cluster are added to the
 * shared registry at start when no schema of that name is there.
 */
import { SvcError } from '../../errors';
import { type Logger } from '../../log';
import { type ControlChannel, type PutOptions, type SchemaControl, type SchemaControlResult, type SchemaDocument, SchemaDocs, type Schemas, checkSchemaName, parseRegistration } from '../../shards';
import { MetaConflictError, type MetaRecord, type MetaStore } from '../../actors';

export const SCHEMA_PREFIX = 'stream-schemas/';
export const SCHEMA_APPLIED_PREFIX = 'stream-schemas-applied/';

/** A registration as stored: a deleted one stays as a tombstone. */
type StoredSchema = SchemaDocument & { deleted?: true };

const live = (r: MetaRecord<StoredSchema> | null): MetaRecord<StoredSchema> | null => (r === null || r.value.deleted === true ? null : r);

/** A node's acknowledgement: the metadata revision its workers have applied every schema change up to. */
export interface SchemaApplied {
  revision: number;
  /** Recent deletes this node refused (a stream of it is bound): the revision of the delete, the schema, the stream. */
  bound: Array<{ revision: number; name: string; stream: string }>;
}

/** How long a write waits for every live node's acknowledgement. */
export const SCHEMA_BARRIER_MS = 10_000;
const BOUND_KEPT = 16;

export class SharedSchemas implements Schemas {
  readonly #meta: MetaStore;
  readonly #nodeId: number;
  readonly #liveNodeIds: () => number[];
  readonly #log: Logger;
  readonly #barrierMs: number;
  /** What this node's workers validate with. */
  readonly #docs = new SchemaDocs();
  #channel: ControlChannel | null = null;
  /** Changes seen by the watch, applied to the workers one at a time. */
  #applying: Promise<void> = Promise.resolve();
  #appliedRevision = 0;
  #bound: SchemaApplied['bound'] = [];
  /** Writers waiting for acknowledgements: re-checked on each one. */
  readonly #waiters = new Set<() => void>();
  #closed = false;

  constructor(meta: MetaStore, nodeId: number, liveNodeIds: () => number[], log: Logger, options: { barrierMs?: number } = {}) {
    this.#meta = meta;
    this.#nodeId = nodeId;
    this.#liveNodeIds = liveNodeIds;
    this.#log = log;
    this.#barrierMs = options.barrierMs ?? SCHEMA_BARRIER_MS;
    for (const r of meta.list<StoredSchema>(SCHEMA_PREFIX)) if (r.value.deleted !== true) this.#docs.set(r.value.name, r.value);
    this.#appliedRevision = meta.appliedIndex;
    meta.onChange((key, record) => {
      if (key.startsWith(SCHEMA_PREFIX)) this.#changed(key.slice(SCHEMA_PREFIX.length), live(record as MetaRecord<StoredSchema> | null), meta.appliedIndex);
      else if (key.startsWith(SCHEMA_APPLIED_PREFIX)) for (const w of [...this.#waiters]) w();
    });
  }

  /** Local schema files of a node joining a cluster: added where the shared registry has none of that name. */
  async adopt(docs: readonly SchemaDocument[]): Promise<void> {
    for (const d of docs) {
      const cur = this.#meta.get<StoredSchema>(SCHEMA_PREFIX + d.name);
      if (live(cur) !== null) continue;
      await this.#meta.put(SCHEMA_PREFIX + d.name, d, cur === null ? { absent: true } : { version: cur.version }).catch((err: unknown) => {
        if (!(err instanceof MetaConflictError)) throw err;
      });
      this.#docs.set(d.name, d);
    }
  }

  /** Connect the workers (started with `documents()`) and acknowledge what they hold. */
  attach(channel: ControlChannel): void {
    this.#channel = channel;
    // Changes seen while the workers started may have missed them: every registration again (the same version is a no-op there).
    this.#applying = this.#applying.then(async () => {
      for (const doc of this.documents()) await this.#broadcast({ type: 'schemas', op: 'put', doc });
      await this.#acknowledge(this.#appliedRevision);
    });
  }

  documents(): SchemaDocument[] {
    return this.#docs.sorted();
  }

  has(name: string): boolean {
    return this.#docs.has(name);
  }

  get(name: string): SchemaDocument {
    return this.#docs.need(name);
  }

  async put(name: string, body: unknown, options: PutOptions = {}): Promise<{ created: boolean; doc: SchemaDocument }> {
    checkSchemaName(name);
    const { type, schema } = parseRegistration(name, body);
    for (let attempt = 0; ; attempt++) {
      await this.#meta.sync();
      const stored = this.#meta.get<StoredSchema>(SCHEMA_PREFIX + name);
      const cur = live(stored);
      if (cur !== null && cur.value.type === type && JSON.stringify(cur.value.schema) === JSON.stringify(schema) && (options.version === undefined || options.version === cur.value.version)) {
        // Unchanged: still answered only once every node has it (a repeated PUT after a 503 waits again).
        await this.#barrier(cur.version);
        return { created: false, doc: cur.value };
      }
      const now = Date.now();
      const doc: SchemaDocument = {
        name,
        type,
        schema,
        version: options.version ?? (cur?.value.version ?? 0) + 1,
        createdAtMs: cur?.value.createdAtMs ?? now,
        updatedAtMs: Math.max(now, cur?.value.updatedAtMs ?? 0),
      };
      let written: MetaRecord<StoredSchema>;
      try {
        written = await this.#meta.put<StoredSchema>(SCHEMA_PREFIX + name, doc, stored === null ? { absent: true } : { version: stored.version });
      } catch (err) {
        // Another node registered it at the same time: read again and decide again.
        if (err instanceof MetaConflictError && attempt < 5) continue;
        throw err;
      }
      await this.#barrier(written.version);
      return { created: cur === null, doc };
    }
  }

  async delete(name: string): Promise<void> {
    checkSchemaName(name);
    await this.#meta.sync();
    const cur = live(this.#meta.get<StoredSchema>(SCHEMA_PREFIX + name));
    if (cur === null) throw new SvcError('not_found', `no schema ${name}`);
    const tombstone = await this.#meta.put<StoredSchema>(SCHEMA_PREFIX + name, { ...cur.value, deleted: true }, { version: cur.version }).catch((err: unknown) => {
      if (err instanceof MetaConflictError) throw new SvcError('conflict', `schema ${name} changed while it was being deleted; try again`);
      throw err;
    });
    const revision = tombstone.version;
    await this.#barrier(revision);
    const bound = this.#boundAt(revision, name);
    if (bound !== null) {
      // A stream somewhere is bound to it: put it back (the nodes that dropped it take it again).
      const back = await this.#meta.put<StoredSchema>(SCHEMA_PREFIX + name, cur.value, { version: revision }).catch(() => null);
      if (back !== null) await this.#barrier(back.version).catch(() => undefined);
      throw new SvcError('conflict', `schema ${name} is bound to stream ${bound}; unbind it (PATCH /_streams/{name}) or delete the stream first`);
    }
  }

  close(): void {
    this.#closed = true;
    for (const w of [...this.#waiters]) w();
  }

  /** A stream bound to `name` that a node reported when it applied the delete at `revision`, or null. */
  #boundAt(revision: number, name: string): string | null {
    for (const r of this.#meta.list<SchemaApplied>(SCHEMA_APPLIED_PREFIX)) {
      const hit = r.value.bound.find((b) => b.revision === revision && b.name === name);
      if (hit !== undefined) return hit.stream;
    }
    return null;
  }

  /** Resolve once every live node has acknowledged `revision`; 503 after the deadline. */
  #barrier(revision: number): Promise<void> {
    const lagging = (): number[] =>
      this.#liveNodeIds().filter((id) => (this.#meta.get<SchemaApplied>(SCHEMA_APPLIED_PREFIX + id)?.value.revision ?? 0) < revision);
    if (lagging().length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (this.#closed) return done(new SvcError('storage_unavailable', 'the node is stopping'));
        if (lagging().length === 0) done(null);
      };
      const timer = setTimeout(() => {
        done(new SvcError('storage_unavailable', `the schema change is stored, but node(s) ${lagging().join(', ')} did not apply it within ${this.#barrierMs} ms; repeat the request to wait again`));
      }, this.#barrierMs);
      // Nodes that stop being live are waited for no longer: membership changes come through the same watch.
      const poll = setInterval(check, 200);
      const done = (err: Error | null): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.#waiters.delete(check);
        if (err === null) resolve();
        else reject(err);
      };
      this.#waiters.add(check);
    });
  }

  /** A change of the shared registry seen by this node's watch (its own writes included). */
  #changed(name: string, record: MetaRecord<StoredSchema> | null, revision: number): void {
    this.#applying = this.#applying
      .then(async () => {
        if (record === null) {
          const results = (await this.#broadcast({ type: 'schemas', op: 'delete', name })) as SchemaControlResult[];
          const bound = results.find((r) => r.boundBy !== null);
          const cur = this.#docs.get(name);
          if (bound !== undefined && cur !== undefined) {
            // Workers with no bound stream dropped it already: give it back to them until the writer puts it back.
            await this.#broadcast({ type: 'schemas', op: 'put', doc: cur });
            this.#bound = [...this.#bound, { revision, name, stream: bound.boundBy! }].slice(-BOUND_KEPT);
          } else {
            this.#docs.delete(name);
          }
        } else {
          await this.#broadcast({ type: 'schemas', op: 'put', doc: record.value });
          this.#docs.set(name, record.value);
        }
        await this.#acknowledge(revision);
      })
      .catch((err: unknown) => {
        this.#log.error({ err, schema: name, revision }, 'stream schema change not applied to the shard workers');
      });
  }

  async #broadcast(msg: SchemaControl): Promise<unknown[]> {
    return this.#channel === null ? [] : this.#channel.control(msg);
  }

  async #acknowledge(revision: number): Promise<void> {
    if (this.#channel === null || this.#closed) return;
    this.#appliedRevision = Math.max(this.#appliedRevision, revision);
    const ack: SchemaApplied = { revision: this.#appliedRevision, bound: this.#bound };
    await this.#meta.put(SCHEMA_APPLIED_PREFIX + this.#nodeId, ack);
  }
}
