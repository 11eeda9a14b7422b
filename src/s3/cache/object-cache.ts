/**
 * The cache proper: memory tier, disk tier, metadata cache and the fills in flight, keyed by
 * bucket and key. Every bucket is a namespace whose policy (cache or not, TTL, largest
 * object) comes from [buckets] and is created on first use.
 *
 * Consistency with writes: `invalidate` bumps the key's generation and detaches any fill
 * in flight, so a fetch that started before a write can never store the old bytes after it.
 */
import { type IncomingMessage } from 'node:http';
import { type BucketPolicy } from '../config';
import { type Logger } from '../log';
import { type Metrics } from '../metrics';
import { type Origin } from '../origin';
import { type DiskEntry, DiskTier, type DiskWriter } from './disk-tier';
import { type ObjectMeta, cacheKey, metaFromResponse } from './entry';
import { Fill } from './fill';
import { type MemoryEntry, MemoryTier } from './memory-tier';
import { type MetaEntry, MetadataCache } from './metadata-cache';

export interface CacheOptions {
  dir: string;
  diskBytes: number;
  memoryBytes: number;
  memoryObjectMax: number;
  metadataEntries: number;
}

/** A stored object: in memory (body) or on disk (file). */
export type Hit = { tier: 'memory'; entry: MemoryEntry } | { tier: 'disk'; entry: DiskEntry };

const ERROR_BODY_MAX = 1024 * 1024; // 1 MiB: origin error bodies are small XML

export class ObjectCache {
  readonly #memory: MemoryTier;
  readonly #disk: DiskTier;
  readonly #meta: MetadataCache;
  readonly #fills = new Map<string, Fill>();
  readonly #heads = new Map<string, Promise<ObjectMeta | undefined>>();
  readonly #generations = new Map<string, number>();
  readonly #origin: Origin;
  readonly #metrics: Metrics;
  readonly #log: Logger;
  readonly #policies = new Map<string, BucketPolicy>();
  readonly #policyOf: (bucket: string) => BucketPolicy;
  #generation = 0;

  constructor(o: CacheOptions, origin: Origin, metrics: Metrics, log: Logger, policyOf: (bucket: string) => BucketPolicy) {
    this.#memory = new MemoryTier(o.memoryBytes, o.memoryObjectMax, () => metrics.evictions.inc({ tier: 'memory' }));
    this.#disk = new DiskTier(o.dir, o.diskBytes, () => metrics.evictions.inc({ tier: 'disk' }));
    this.#meta = new MetadataCache(o.metadataEntries);
    this.#origin = origin;
    this.#metrics = metrics;
    this.#log = log;
    this.#policyOf = policyOf;
  }

  /** Opens the disk tier (indexing what a previous run stored); resolves with the object count. */
  open(): Promise<number> {
    return this.#disk.open();
  }

  /** The bucket's namespace policy, created on first use. */
  policy(bucket: string): BucketPolicy {
    let p = this.#policies.get(bucket);
    if (p === undefined) {
      p = this.#policyOf(bucket);
      this.#policies.set(bucket, p);
      this.#log.debug({ bucket, policy: p }, 'namespace created');
    }
    return p;
  }

  lookup(bucket: string, key: string): Hit | undefined {
    const id = cacheKey(bucket, key);
    const m = this.#memory.get(id);
    if (m !== undefined) return { tier: 'memory', entry: m };
    const d = this.#disk.get(id);
    return d === undefined ? undefined : { tier: 'disk', entry: d };
  }

  /** Copies a small disk hit into memory after it was read from disk. */
  promote(bucket: string, key: string, d: DiskEntry, body: Buffer): void {
    if (this.#memory.fits(body.length)) this.#memory.set(cacheKey(bucket, key), { meta: d.meta, body, checkedAt: d.checkedAt });
  }

  fitsMemory(size: number): boolean {
    return this.#memory.fits(size);
  }

  metadata(bucket: string, key: string): MetaEntry | undefined {
    return this.#meta.get(cacheKey(bucket, key));
  }

  rememberMetadata(bucket: string, key: string, meta: ObjectMeta, now = Date.now()): void {
    this.#meta.set(cacheKey(bucket, key), { meta, checkedAt: now });
  }

  /**
   * The object's metadata from one origin HEAD shared by every concurrent caller (50 cold range
   * reads of one object send one HEAD, not 50), remembered in the metadata cache. A write
   * (`invalidate`) detaches the HEAD in flight: later callers send their own, and the detached
   * one's answer is not remembered, as it may describe the version before the write.
   */
  sharedHead(bucket: string, key: string, head: () => Promise<ObjectMeta | undefined>): Promise<ObjectMeta | undefined> {
    const id = cacheKey(bucket, key);
    const inFlight = this.#heads.get(id);
    if (inFlight !== undefined) return inFlight;
    const gen = this.#generations.get(id) ?? 0;
    const p = head().then(
      (meta) => {
        if (this.#heads.get(id) === p) this.#heads.delete(id);
        if (meta !== undefined && (this.#generations.get(id) ?? 0) === gen) this.rememberMetadata(bucket, key, meta);
        return meta;
      },
      (err: unknown) => {
        if (this.#heads.get(id) === p) this.#heads.delete(id);
        throw err;
      },
    );
    this.#heads.set(id, p);
    return p;
  }

  /** The origin confirmed the cached version again. */
  touch(bucket: string, key: string, now = Date.now()): void {
    const id = cacheKey(bucket, key);
    const m = this.#memory.get(id);
    if (m !== undefined) m.checkedAt = now;
    this.#disk.touch(id, now);
    const meta = this.#meta.get(id);
    if (meta !== undefined) meta.checkedAt = now;
  }

  /** Forgets everything about the object; fills in flight are detached and will not be stored. */
  invalidate(bucket: string, key: string): void {
    const id = cacheKey(bucket, key);
    this.#generations.set(id, ++this.#generation);
    this.#fills.delete(id);
    this.#heads.delete(id);
    this.#memory.delete(id);
    this.#disk.delete(id);
    this.#meta.delete(id);
    this.#metrics.invalidations.inc();
  }

  /** Inserts an object the client just wrote (PutObject ≤ populate_max) under the origin's ETag. */
  async populate(bucket: string, key: string, meta: ObjectMeta, body: Buffer, now = Date.now()): Promise<void> {
    const id = cacheKey(bucket, key);
    const gen = this.#generations.get(id) ?? 0;
    if (meta.size > this.policy(bucket).max_object_bytes || !this.policy(bucket).cache) return;
    this.#meta.set(id, { meta, checkedAt: now });
    this.#memory.set(id, { meta, body, checkedAt: now });
    if (!this.#disk.enabled) return;
    // A disk failure costs the disk copy only: the write itself succeeded at the origin.
    let w: DiskWriter | undefined;
    try {
      w = await this.#disk.create();
      w.write(body);
      if ((this.#generations.get(id) ?? 0) !== gen) return void (await w.abort());
      await this.#disk.commit(id, bucket, key, meta, now, w);
      // A later write that landed while the file was being committed wins.
      if ((this.#generations.get(id) ?? 0) !== gen) this.#disk.delete(id);
    } catch (err) {
      this.#log.warn({ bucket, key, err }, 'cache populate failed');
      await w?.abort().catch(() => {});
    }
  }

  /** Whether a fill of the object is in flight (a range reader then joins it instead of sizing the object first). */
  filling(bucket: string, key: string): boolean {
    return this.#fills.has(cacheKey(bucket, key));
  }

  /**
   * Joins the fill of the object in flight, or starts one. With `stale`, the origin is asked
   * `If-None-Match` the stale ETag, and a 304 keeps the stored copy.
   */
  fill(bucket: string, key: string, stale?: ObjectMeta): Fill {
    const id = cacheKey(bucket, key);
    const running = this.#fills.get(id);
    if (running !== undefined && !running.failed) {
      running.joined++;
      this.#metrics.coalesced.inc();
      return running;
    }
    const f = new Fill(this.#generations.get(id) ?? 0);
    this.#fills.set(id, f);
    this.#metrics.misses.inc();
    const done = () => {
      if (this.#fills.get(id) === f) this.#fills.delete(id);
    };
    const started = process.hrtime.bigint();
    this.#origin
      .send({ method: 'GET', target: { bucket, key }, headers: stale ? { 'if-none-match': stale.etag } : {} })
      .then(
        (res) => {
          this.#metrics.origin.observe({ method: 'GET' }, Number(process.hrtime.bigint() - started) / 1e9);
          this.#receive(bucket, key, id, f, res, done);
        },
        (err: Error) => {
          this.#metrics.originErrors.inc();
          done();
          f.fail(err);
        },
      );
    return f;
  }

  #receive(bucket: string, key: string, id: string, f: Fill, res: IncomingMessage, done: () => void): void {
    const status = res.statusCode ?? 502;
    if (status >= 500) this.#metrics.originErrors.inc();
    if (status === 304) {
      res.resume();
      done();
      f.answer({ kind: 'not-modified' });
      return;
    }
    if (status !== 200) {
      done();
      const parts: Buffer[] = [];
      let n = 0;
      res.on('data', (b: Buffer) => {
        n += b.length;
        if (n <= ERROR_BODY_MAX) parts.push(b);
      });
      res.on('end', () => f.answer({ kind: 'status', status, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', (err) => f.fail(err));
      return;
    }
    const meta = metaFromResponse(res.headers);
    const policy = this.policy(bucket);
    if (meta === undefined || meta.size > policy.max_object_bytes || !policy.cache) {
      done();
      let taken = false;
      // Nobody took it within a turn (every waiter left): let the socket go.
      const release = setTimeout(() => !taken && res.destroy(), 1000);
      f.answer({
        kind: 'passthrough',
        meta,
        take: () => {
          if (taken) return undefined;
          taken = true;
          clearTimeout(release);
          return res;
        },
      });
      return;
    }
    this.#meta.set(id, { meta, checkedAt: Date.now() });
    f.answer({ kind: 'object', meta });
    const writer = this.#disk.enabled ? this.#disk.create() : undefined;
    writer?.catch(() => {});
    res.on('data', (b: Buffer) => {
      f.data(b);
      void writer?.then((w) => w.write(b), () => {});
    });
    res.on('error', (err) => {
      done();
      f.fail(err);
      void writer?.then((w) => w.abort(), () => {});
    });
    res.on('end', () => {
      if (f.received !== meta.size) {
        done();
        f.fail(new Error(`origin sent ${f.received} of ${meta.size} bytes`));
        void writer?.then((w) => w.abort(), () => {});
        return;
      }
      f.end();
      // The fill stays joinable until the object is stored, so no reader falls into the gap
      // between the last byte and the commit and starts a second origin fetch.
      void this.#store(bucket, key, id, f, meta, writer).finally(done);
    });
  }

  async #store(bucket: string, key: string, id: string, f: Fill, meta: ObjectMeta, writer: Promise<DiskWriter> | undefined): Promise<void> {
    const current = () => (this.#generations.get(id) ?? 0) === f.generation;
    const now = Date.now();
    try {
      if (current() && this.#memory.fits(meta.size)) this.#memory.set(id, { meta, body: f.body(), checkedAt: now });
      if (writer === undefined) return;
      const w = await writer;
      if (!current()) return void (await w.abort());
      await this.#disk.commit(id, bucket, key, meta, now, w);
      // A write that landed while the file was being committed wins.
      if (!current()) this.#disk.delete(id);
    } catch (err) {
      this.#log.warn({ bucket, key, err }, 'cache store failed');
    }
  }

  get stats(): { memoryBytes: number; diskBytes: number; diskObjects: number; fills: number } {
    return { memoryBytes: this.#memory.bytes, diskBytes: this.#disk.bytes, diskObjects: this.#disk.size, fills: this.#fills.size };
  }
}
