/**
 * The node's Prometheus metrics (docs/metrics.md): the only file of the node that imports
 * prom-client. Each node gets its own registry, so tests can run many in one process.
 *
 * Hot path: a request adds to plain numbers of its (listener, op) series, found once per op and
 * kept in arrays: a status-class count and a latency bucket. prom-client's label children would
 * hash their labels on every call, so these series are exposed by collectors of their own.
 * Everything else (appends, live readers, Kafka, appliedIndex, metadata sync, shard health) is a plain number
 * kept where the work happens and read here by `collect()` at scrape time.
 */
import { Counter, Gauge, type Metric, Registry, collectDefaultMetrics } from 'prom-client';
import { type CompactionStats, OBJECT_OPS, OBJECT_SECONDS_BOUNDS, type ObjectStoreStats } from '../../objects';
import { type BucketCounts, COMMIT_FRAME_BOUNDS, COMMIT_SECONDS_BOUNDS, type CommitStats, type ReadCacheStats, type ReadPoolStats } from '../../shards';
import { EVENT_LOOP_SAMPLE_MS } from '../../util/event-loop-sampling';
import { type GatewayFigures, LATENCY_BUCKETS, RequestCounts, type RequestSeries, STATUS_CLASSES, sumByApi, sumFigures, sumSeries } from './request-counts';

/** What the node tells the metrics at scrape time; each is cheap or bounded. */
export interface MetricSources {
  /** Acknowledged appends since start (ShardClient.appended). */
  appended(): { records: number; bytes: number };
  /** Live readers now (LiveWaiters.readers). */
  liveReaders(): { sse: number; longPoll: number };
  /** The Kafka listener, once started. */
  kafka(): { connections: number; requests: Array<{ api: string; count: number }> } | null;
  /** Asked once per scrape: the admin API's appliedIndex and the shards' group-commit histograms (one stats call). */
  shards(): Promise<{ appliedIndex: number; commits: CommitStats | null; readCache: ReadCacheStats | null; readPool?: ReadPoolStats | null }>;
  /** Shard workers down after a storage failure, and whether the disk is full; the shards, and those whose worker is down. */
  shardHealth(): { workersDown: number; diskFull: boolean; shards?: number; shardsDown?: number };
  /** The metadata store's sync() (read-index) latency with its bucket bounds (seconds); null where sync() waits for nothing (local). */
  metadataSync?(): { bounds: readonly number[]; latency: BucketCounts } | null;
  /** SSE fan-out lag (LiveWaiters.fanoutLag) with its bucket bounds (seconds). */
  fanoutLag?(): { bounds: readonly number[]; lag: BucketCounts };
  /** Asked once per scrape: the lag of every committed consumer-group partition (the Kafka listener's groups). */
  groupLag?(): Promise<GroupLag[]>;
  /** Asked once per scrape in objects mode: the object ledger's o/ and d/ record counts (cluster-wide, cached a moment). */
  objectCounts?(): Promise<{ objectCount: number; destroyedObjectBacklog: number }>;
  /**
   * Asked once per scrape: the object store's figures, every thread's summed (addObjectStoreStats);
   * null (or absent) without `--objects`, and then no svc_object_store_* samples are exposed.
   */
  objectStore?(): Promise<ObjectStoreStats | null> | ObjectStoreStats | null;
  /** Objects mode: compaction's bytes read and written and its time throttled (as of the maintenance thread's last report); absent: no series. */
  compaction?(): CompactionStats | null;
  /** Whether this node holds the maintenance lease (null: unknown, e.g. not registered); absent: no series. */
  leaseHolder?(): boolean | null;
  /** Moves pending cluster-wide (rows `opening` with a `from`: the overview's pendingTransfers), and streams opened here after a move since start. */
  moves?(): { pending: number; opened: number } | null;
  /** Asked once per scrape with gateway threads (`--gateway-threads`): each thread's requests, appends and live readers. */
  gatewayThreads?(): Promise<GatewayFigures[]>;
}

/** One consumer group's lag on one partition: the partition's next offset minus the committed offset. */
export interface GroupLag {
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

/** Series of svc_kafka_consumer_group_lag kept at most (groups × partitions), so a scrape stays bounded. */
export const MAX_GROUP_LAG_SERIES = 1000;

export class NodeMetrics {
  readonly registry = new Registry();
  /** Set by attach(); a holder, so the scrape-time readers (where `this` is the metric) can reach it. */
  readonly #from: {
    sources: MetricSources | null;
    shards: { appliedIndex: number; commits: CommitStats | null; readCache: ReadCacheStats | null; readPool?: ReadPoolStats | null } | null;
    groupLag: GroupLag[];
    objects: ObjectStoreStats | null;
    objectCounts: { objectCount: number; destroyedObjectBacklog: number } | null;
    threads: GatewayFigures | null;
  } = { sources: null, shards: null, groupLag: [], objects: null, objectCounts: null, threads: null };
  /** This thread's requests (metered.ts); the gateway threads keep their own, summed in at each scrape. */
  readonly requests = new RequestCounts();

  constructor() {
    const registers = [this.registry];
    const from = this.#from;
    const all = (): RequestSeries[] => (from.threads === null ? this.requests.all() : sumSeries([this.requests.all(), from.threads.requests]));
    this.registry.registerMetric(
      customMetric('svc_http_requests_total', 'HTTP requests answered, by listener, operation and status class', 'counter', () =>
        all().flatMap((x) => x.byClass.flatMap((n, k) => (n > 0 ? [{ metricName: 'svc_http_requests_total', labels: { listener: x.listener, op: x.op, status: STATUS_CLASSES[k]! }, value: n }] : []))),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_http_request_duration_seconds', 'HTTP request latency until the status line (a streamed response: until its head)', 'histogram', () =>
        all().flatMap((x) => bucketValues('svc_http_request_duration_seconds', LATENCY_BUCKETS, x.latency, { listener: x.listener, op: x.op })),
      ),
    );
    // The node's clock at the scrape: a reader's rates divide by the node's own interval between two
    // scrapes, not by when the answers reached it (the dashboard's, on a busy machine, were off by 3×).
    new Gauge({
      name: 'svc_scrape_time_seconds',
      help: "the node's clock (Unix time, seconds) when this scrape was taken",
      registers,
      collect() {
        this.set(Date.now() / 1000);
      },
    });
    new Counter({
      name: 'svc_appended_records_total',
      help: 'records appended and acknowledged (HTTP, Durable Streams and Kafka produce)',
      registers,
      collect() {
        this.reset();
        if (from.sources !== null) this.inc(from.sources.appended().records + (from.threads?.appended.records ?? 0));
      },
    });
    new Counter({
      name: 'svc_appended_bytes_total',
      help: 'bytes of acknowledged appends as handed to the shards',
      registers,
      collect() {
        this.reset();
        if (from.sources !== null) this.inc(from.sources.appended().bytes + (from.threads?.appended.bytes ?? 0));
      },
    });
    new Gauge({
      name: 'svc_live_readers',
      help: 'live readers now (SSE streams and waiting long-polls)',
      labelNames: ['kind'] as const,
      registers,
      collect() {
        const r = from.sources?.liveReaders() ?? { sse: 0, longPoll: 0 };
        this.set({ kind: 'sse' }, r.sse + (from.threads?.liveReaders.sse ?? 0));
        this.set({ kind: 'long_poll' }, r.longPoll + (from.threads?.liveReaders.longPoll ?? 0));
      },
    });
    new Gauge({
      name: 'svc_kafka_connections',
      help: 'open Kafka client connections',
      registers,
      collect() {
        this.set(from.sources?.kafka()?.connections ?? 0);
      },
    });
    new Counter({
      name: 'svc_kafka_requests_total',
      help: 'Kafka requests accepted, by API',
      labelNames: ['api'] as const,
      registers,
      collect() {
        this.reset();
        for (const r of sumByApi([...(from.sources?.kafka()?.requests ?? []), ...(from.threads?.kafkaRequests ?? [])])) this.inc({ api: r.api }, r.count);
      },
    });
    new Gauge({
      name: 'svc_metadata_applied_index',
      help: "position of the last applied metadata change (the admin API's appliedIndex)",
      registers,
      collect() {
        if (from.shards !== null) this.set(from.shards.appliedIndex);
      },
    });
    new Gauge({
      name: 'svc_shard_workers_down',
      help: 'shard workers down after a storage failure (the node is not ready while any is)',
      registers,
      collect() {
        this.set(from.sources?.shardHealth().workersDown ?? 0);
      },
    });
    new Gauge({
      name: 'svc_shards',
      help: "the node's storage shards",
      registers,
      collect() {
        this.set(from.sources?.shardHealth().shards ?? 0);
      },
    });
    new Gauge({
      name: 'svc_shards_unavailable',
      help: 'shards whose worker is down after a storage failure (their requests fail with storage_unavailable)',
      registers,
      collect() {
        this.set(from.sources?.shardHealth().shardsDown ?? 0);
      },
    });
    new Gauge({
      name: 'svc_disk_full',
      help: '1 while the data directory disk is full (creates and appends refused)',
      registers,
      collect() {
        this.set(from.sources?.shardHealth().diskFull === true ? 1 : 0);
      },
    });
    this.registry.registerMetric(
      customMetric('svc_metadata_sync_duration_seconds', "metadata sync() (read index): from a cohort's first caller to its linearizable read applied", 'histogram', () => {
        const m = from.sources?.metadataSync?.() ?? null;
        return m === null ? [] : bucketValues('svc_metadata_sync_duration_seconds', m.bounds, m.latency, {});
      }),
    );
    this.registry.registerMetric(
      customMetric('svc_live_fanout_lag_seconds', "SSE fan-out lag: from a live reader's wake (the tail event reaching the gateway) to its records written", 'histogram', () => {
        const f = from.sources?.fanoutLag?.() ?? null;
        return f === null ? [] : bucketValues('svc_live_fanout_lag_seconds', f.bounds, f.lag, {});
      }),
    );
    new Gauge({
      name: 'svc_kafka_consumer_group_lag',
      help: "a consumer group's lag on a partition: the partition's next offset minus the group's committed offset",
      labelNames: ['group', 'topic', 'partition'] as const,
      registers,
      collect() {
        // Groups and partitions come and go: only those of this scrape are exposed.
        this.reset();
        for (const g of from.groupLag) this.set({ group: g.group, topic: g.topic, partition: String(g.partition) }, g.lag);
      },
    });
    // The maintenance lease and moves (docs/cluster.md): read from the node's view at scrape time.
    this.registry.registerMetric(
      customMetric('svc_maintenance_lease_holder', 'whether this node holds the maintenance lease (1) or not (0); absent while unknown', 'gauge', () => {
        const h = from.sources?.leaseHolder?.() ?? null;
        return h === null ? [] : [{ metricName: 'svc_maintenance_lease_holder', labels: {}, value: h ? 1 : 0 }];
      }),
    );
    this.registry.registerMetric(
      customMetric('svc_transfers_pending', 'stream moves (transfers, failovers, reopens) pending cluster-wide: placement rows opening on their new node', 'gauge', () => {
        const m = from.sources?.moves?.() ?? null;
        return m === null ? [] : [{ metricName: 'svc_transfers_pending', labels: {}, value: m.pending }];
      }),
    );
    this.registry.registerMetric(
      customMetric('svc_streams_opened_total', 'streams this node opened after a move since it started (a transfer, a failover or its restart reopening its own)', 'counter', () => {
        const m = from.sources?.moves?.() ?? null;
        return m === null ? [] : [{ metricName: 'svc_streams_opened_total', labels: {}, value: m.opened }];
      }),
    );
    // Objects mode only (absent otherwise): the cluster's objects as the object ledger counts them.
    this.registry.registerMetric(
      customMetric('svc_objects', 'objects mode: objects in the object store that the ledger knows (o/ records), cluster-wide', 'gauge', () =>
        from.objectCounts === null ? [] : [{ metricName: 'svc_objects', labels: {}, value: from.objectCounts.objectCount }],
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_objects_destroyed_backlog', 'objects mode: objects marked destroyed whose deletion is pending (d/ records), cluster-wide', 'gauge', () =>
        from.objectCounts === null ? [] : [{ metricName: 'svc_objects_destroyed_backlog', labels: {}, value: from.objectCounts.destroyedObjectBacklog }],
      ),
    );
    // Compaction on the object maintenance thread (docs/objects.md, "Compaction and the reaper"), as the thread last reported it.
    this.registry.registerMetric(
      customMetric('svc_objects_compaction_bytes_total', 'objects mode: bytes compaction read from the object store (op get) and wrote to it (op put)', 'counter', () => {
        const c = from.sources?.compaction?.() ?? null;
        return c === null ? [] : [{ metricName: 'svc_objects_compaction_bytes_total', labels: { op: 'get' }, value: c.readBytes }, { metricName: 'svc_objects_compaction_bytes_total', labels: { op: 'put' }, value: c.writtenBytes }];
      }),
    );
    this.registry.registerMetric(
      customMetric('svc_objects_compaction_throttled_seconds_total', 'objects mode: time compaction waited for --objects-compact-bytes-per-second before its object store requests', 'counter', () => {
        const c = from.sources?.compaction?.() ?? null;
        return c === null ? [] : [{ metricName: 'svc_objects_compaction_throttled_seconds_total', labels: {}, value: c.throttledMs / 1000 }];
      }),
    );
    // Kept by the shard workers as bucket counts (shards/commit-stats.ts), exposed as they are.
    this.registry.registerMetric(
      customMetric('svc_group_commit_frames', 'frames (appends, catalog changes) written per group commit', 'histogram', () =>
        bucketValues('svc_group_commit_frames', COMMIT_FRAME_BOUNDS, from.shards?.commits?.frames ?? null, {}),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_group_commit_duration_seconds', "a group commit's write + fdatasync (objects mode: object PUT, ledger transaction and local write)", 'histogram', () =>
        bucketValues('svc_group_commit_duration_seconds', COMMIT_SECONDS_BOUNDS, from.shards?.commits?.seconds ?? null, {}),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_objects_ledger_commit_seconds', "objects mode: a group commit's ledger transaction in etcd, sent to answered (retries included)", 'histogram', () =>
        from.objects === null ? [] : bucketValues('svc_objects_ledger_commit_seconds', COMMIT_SECONDS_BOUNDS, from.shards?.commits?.ledger ?? null, {}),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_log_syncs_total', 'fdatasyncs that made group commits durable: one per group of a shard alone in its turn, one per commit barrier of several shards (its sync journal)', 'counter', () =>
        from.shards?.commits === null || from.shards?.commits === undefined ? [] : [{ metricName: 'svc_log_syncs_total', labels: {}, value: from.shards.commits.syncs }],
      ),
    );
    // The shard workers' read caches (docs/storage.md, "Read cache"), summed over the workers.
    const cache = (name: string, help: string, type: 'counter' | 'gauge', pick: (r: ReadCacheStats) => number): void => {
      this.registry.registerMetric(customMetric(name, help, type, () => (from.shards?.readCache == null ? [] : [{ metricName: name, labels: {}, value: pick(from.shards.readCache) }])));
    };
    cache('svc_read_cache_hits_total', 'chunks a raw read took from the shard workers\' read caches', 'counter', (r) => r.hits);
    cache('svc_read_cache_fills_total', 'chunks checked, rendered and added to the read caches', 'counter', (r) => r.fills);
    cache('svc_read_cache_bytes', 'bytes the read caches hold', 'gauge', (r) => r.bytes);
    cache('svc_read_cache_lent_total', 'raw catch-up pages sent as views of the read caches, not copied', 'counter', (r) => r.lent);
    cache('svc_read_cache_returned_total', 'pages sent as views of the read caches that were handed back once sent', 'counter', (r) => r.returned);
    // The shard workers' read page buffers (docs/storage.md, "Read page buffers"), summed over the workers.
    const pool = (name: string, help: string, type: 'counter' | 'gauge', pick: (r: ReadPoolStats) => number): void => {
      this.registry.registerMetric(customMetric(name, help, type, () => (from.shards?.readPool == null ? [] : [{ metricName: name, labels: {}, value: pick(from.shards.readPool) }])));
    };
    pool('svc_read_pool_reused_total', 'read pages rendered into a buffer a response had sent and handed back', 'counter', (r) => r.reused);
    pool('svc_read_pool_allocated_total', 'read page buffers allocated because the pool had none of the size', 'counter', (r) => r.allocated);
    pool('svc_read_pool_returned_total', 'read page buffers handed back to the shard workers once their response was sent', 'counter', (r) => r.returned);
    pool('svc_read_pool_bytes', 'idle read page buffers the shard workers hold', 'gauge', (r) => r.bytes);
    // The object store (docs/objects.md): kept per thread as plain counters (objects/object-stats.ts), summed by the node.
    const objects = (): Array<[string, ObjectStoreStats[keyof ObjectStoreStats]]> => {
      const o = from.objects;
      return o === null ? [] : OBJECT_OPS.map((op) => [op, o[op]]);
    };
    this.registry.registerMetric(
      customMetric('svc_object_store_requests_total', 'object store requests, by operation (put, get, delete, list page) and outcome (ok, not_found, error: after retries)', 'counter', () =>
        objects().flatMap(([op, s]) =>
          (
            [
              ['ok', s.ok],
              ['not_found', s.notFound],
              ['error', s.errors],
            ] as const
          ).map(([outcome, value]) => ({ metricName: 'svc_object_store_requests_total', labels: { op, outcome }, value })),
        ),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_object_store_retries_total', 'object store attempts repeated after a 5xx, SlowDown or no answer (s3:// only)', 'counter', () =>
        objects().map(([op, s]) => ({ metricName: 'svc_object_store_retries_total', labels: { op }, value: s.retries })),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_object_store_request_seconds', 'object store request latency, retries included (list: one page)', 'histogram', () =>
        objects().flatMap(([op, s]) => bucketValues('svc_object_store_request_seconds', OBJECT_SECONDS_BOUNDS, s.seconds, { op })),
      ),
    );
    this.registry.registerMetric(
      customMetric('svc_object_store_bytes_total', 'object bytes written (op put) and read (op get) by successful requests', 'counter', () =>
        objects()
          .filter(([op]) => op === 'put' || op === 'get')
          .map(([op, s]) => ({ metricName: 'svc_object_store_bytes_total', labels: { op }, value: s.bytes })),
      ),
    );
    // Process and event-loop metrics (CPU, memory, handles, GC, event-loop lag), prefixed like ours.
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Connect the node's parts; before this, scrape-time metrics read as zero. */
  attach(sources: MetricSources): void {
    this.#from.sources = sources;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    if (this.#from.sources !== null) {
      const groupLag = this.#from.sources.groupLag?.().catch(() => []) ?? Promise.resolve([]);
      const sources = this.#from.sources;
      const objects = (async () => (await sources.objectStore?.()) ?? null)().catch(() => null);
      // etcd unreachable: the object gauges are left out of this scrape rather than shown as 0.
      const objectCounts = this.#from.sources.objectCounts?.().catch(() => null) ?? Promise.resolve(null);
      const threads = this.#from.sources.gatewayThreads?.().then(sumFigures, () => null) ?? Promise.resolve(null);
      this.#from.shards = await this.#from.sources.shards();
      this.#from.groupLag = (await groupLag).slice(0, MAX_GROUP_LAG_SERIES);
      this.#from.objects = await objects;
      this.#from.objectCounts = await objectCounts;
      this.#from.threads = await threads;
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

type Value = { metricName: string; labels: Record<string, string | number>; value: number };

/** Histogram lines (cumulative buckets, sum, count) from non-cumulative bucket counts. */
function bucketValues(name: string, bounds: readonly number[], b: BucketCounts | null, labels: Record<string, string>): Value[] {
  const values: Value[] = [];
  let cumulative = 0;
  for (let i = 0; i <= bounds.length; i++) {
    cumulative += b?.counts[i] ?? 0;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < bounds.length ? bounds[i]! : '+Inf' }, value: cumulative });
  }
  values.push({ metricName: `${name}_sum`, labels, value: b?.sum ?? 0 });
  values.push({ metricName: `${name}_count`, labels, value: b?.count ?? 0 });
  return values;
}

/** A metric whose figures are kept elsewhere as plain numbers, in the shape prom-client's registry reads. */
function customMetric(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: () => Value[]): Metric {
  const doc = { name, help, type, aggregator: 'sum' };
  return { ...doc, get: () => Promise.resolve({ ...doc, values: values() }) } as unknown as Metric;
}
