/**
 * The schema registry's durable home, on the main thread:
 *
 *   <dataDir>/schemas/<name>.json     one registration per file: {name, type, schema, version, createdAtMs, updatedAtMs}
 *
 * Each file is written atomically (write a temporary file, fsync it, rename it over the old
 * one, fsync the directory), so after a crash a schema is either the old or the new version.
 * Changes are applied one at a time: the file first, then a control message to every shard
 * worker (see schema-registry.ts); the caller is answered only after every worker applied it,
 * so an append accepted after a PUT's answer is validated against the new version.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { SvcError } from '../errors';
import { type SchemaControl, type SchemaControlResult, type SchemaDocument, checkSchemaName, compileSchema, parseRegistration } from './schema-registry';

/**
 * The registry as the gateway uses it: this node's files (SchemaStore) or, in a cluster, the
 * shared metadata (src/gateway/cluster/shared-schemas.ts). Reads answer what this node's workers
 * validate with; writes resolve once they do.
 */
export interface Schemas {
  documents(): SchemaDocument[];
  has(name: string): boolean;
  get(name: string): SchemaDocument;
  /**
   * Register or replace. `options.version` names the version the registration gets (the
   * registry's subject version, when /_schemas is a view of the registry); without it, +1.
   */
  put(name: string, body: unknown, options?: PutOptions): Promise<{ created: boolean; doc: SchemaDocument }>;
  delete(name: string): Promise<void>;
  /** Connect the shard workers (after they started with `documents()`). */
  attach(channel: ControlChannel): void;
}

export interface PutOptions {
  /** The version the registration gets (else the current one + 1). */
  version?: number;
}

/** What the store needs from the shard workers: ShardClient.control. */
export interface ControlChannel {
  control(msg: SchemaControl): Promise<unknown[]>;
}

const DIR = 'schemas';
const SUFFIX = '.json';

/** Registrations by name, as a schema store holds them (this one, and a cluster's shared one). */
export class SchemaDocs extends Map<string, SchemaDocument> {
  /** Every registration, sorted by name. */
  sorted(): SchemaDocument[] {
    return [...this.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The registration of `name`; `not_found` when there is none. */
  need(name: string): SchemaDocument {
    const d = this.get(name);
    if (d === undefined) throw new SvcError('not_found', `no schema ${name}`);
    return d;
  }
}

export class SchemaStore implements Schemas {
  readonly #dir: string;
  readonly #docs = new SchemaDocs();
  readonly #now: () => number;
  #channel: ControlChannel | null = null;
  /** Changes run one after another. */
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(dir: string, now: () => number) {
    this.#dir = dir;
    this.#now = now;
  }

  /**
   * Load every registration under `<dataDir>/schemas/`. A file that does not parse or whose
   * schema no longer compiles stops the start: streams validating against it would otherwise
   * accept anything, or nothing.
   */
  static open(dataDir: string, now: () => number = Date.now): SchemaStore {
    const store = new SchemaStore(path.join(dataDir, DIR), now);
    if (!fs.existsSync(store.#dir)) return store;
    for (const file of fs.readdirSync(store.#dir)) {
      const full = path.join(store.#dir, file);
      if (!file.endsWith(SUFFIX)) {
        // A temporary file left by a crash mid-write: the rename never happened, the old file stands.
        if (file.endsWith('.tmp')) fs.rmSync(full, { force: true });
        continue;
      }
      try {
        const doc = JSON.parse(fs.readFileSync(full, 'utf8')) as SchemaDocument;
        checkSchemaName(doc.name);
        if (doc.name + SUFFIX !== file) throw new Error(`it holds schema ${doc.name}`);
        compileSchema(doc.type, doc.schema);
        store.#docs.set(doc.name, doc);
      } catch (e) {
        throw new Error(`schema file ${full} is not a valid registration: ${(e as Error).message}`, { cause: e });
      }
    }
    return store;
  }

  /** Connect the shard workers (after they started with `documents()`). */
  attach(channel: ControlChannel): void {
    this.#channel = channel;
  }

  /** Every registration, sorted by name. */
  documents(): SchemaDocument[] {
    return this.#docs.sorted();
  }

  has(name: string): boolean {
    return this.#docs.has(name);
  }

  get(name: string): SchemaDocument {
    return this.#docs.need(name);
  }

  /** Register or replace. A document equal to the current one changes nothing (and keeps its version). */
  put(name: string, body: unknown, options: PutOptions = {}): Promise<{ created: boolean; doc: SchemaDocument }> {
    checkSchemaName(name);
    const { type, schema } = parseRegistration(name, body);
    return this.#serial(async () => {
      const cur = this.#docs.get(name);
      const same = cur !== undefined && cur.type === type && JSON.stringify(cur.schema) === JSON.stringify(schema);
      if (same && (options.version === undefined || options.version === cur.version)) return { created: false, doc: cur };
      const now = this.#now();
      const doc: SchemaDocument = {
        name,
        type,
        schema,
        version: options.version ?? (cur?.version ?? 0) + 1,
        createdAtMs: cur?.createdAtMs ?? now,
        updatedAtMs: Math.max(now, cur?.updatedAtMs ?? 0),
      };
      await this.#write(doc);
      await this.#broadcast({ type: 'schemas', op: 'put', doc });
      this.#docs.set(name, doc);
      return { created: cur === undefined, doc };
    });
  }

  /** Remove; refused with `conflict` while a stream is bound to it. */
  delete(name: string): Promise<void> {
    checkSchemaName(name);
    return this.#serial(async () => {
      const cur = this.#docs.get(name);
      if (cur === undefined) throw new SvcError('not_found', `no schema ${name}`);
      const results = (await this.#broadcast({ type: 'schemas', op: 'delete', name })) as SchemaControlResult[];
      const bound = results.find((r) => r.boundBy !== null);
      if (bound !== undefined) {
        // Workers with no bound stream dropped it already: give it back to them.
        await this.#broadcast({ type: 'schemas', op: 'put', doc: cur });
        throw new SvcError('conflict', `schema ${name} is bound to stream ${bound.boundBy}; unbind it (PATCH /_streams/{name}) or delete the stream first`);
      }
      await fsp.rm(this.#file(name), { force: true });
      await syncDir(this.#dir);
      this.#docs.delete(name);
    });
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(f, f);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #broadcast(msg: SchemaControl): Promise<unknown[]> {
    return this.#channel === null ? [] : this.#channel.control(msg);
  }

  #file(name: string): string {
    return path.join(this.#dir, name + SUFFIX);
  }

  /** Off the event loop (fs.promises): the gateway thread is the one every request shares. */
  async #write(doc: SchemaDocument): Promise<void> {
    if (!fs.existsSync(this.#dir)) {
      await fsp.mkdir(this.#dir, { recursive: true });
      await syncDir(path.dirname(this.#dir));
    }
    const file = this.#file(doc.name);
    const tmp = file + '.tmp';
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(doc) + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
    await syncDir(this.#dir);
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
