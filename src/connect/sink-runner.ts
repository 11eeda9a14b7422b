/**
 * Runs one sink (design "Delivery semantics"):
 *
 *   fetch (group svc-connect-sink-<key>, auto-commit off)
 *     → transforms → write (one status per record) ─ retryable: retry with backoff + jitter
 *     → flush (everything ok is durable)            ─ permanent / out of retries: DLQ (ack awaited) or stop
 *     → commit the highest contiguous completed offset of the partition
 *
 * Nothing is committed before the sink said the records are durable, so a crash anywhere in
 * this path re-delivers from the last commit: at-least-once, duplicates bounded by one batch.
 * When a write delivers part of a chunk and the rest must be retried, the delivered prefix is
 * flushed and committed first, so a slow target makes progress across retries and restarts.
 *
 * Losing the node (a restart, a network cut, a failed commit) is not a failure of the sink: the
 * consumer is closed, the sink reports `degraded` and joins again with backoff, forever, and
 * reads on from the last commit. Only the plugin's own failures (records that stay failed with
 * no dead-letter topic) put the sink in `error`.
 */
import { type Definition, type SinkTopics } from './definition-schema';
import { backoff, parseDuration, sleep } from './duration';
import { type ConsumePort, type FetchedBatch, isKafkaError, type KafkaPort, type ProducePort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import { PluginHostError } from './native';
import type { SinkPlugin, SinkRecord } from './plugin-api';
import { type Health, type Tally, withTimeout } from './connector-state';
import { type PartitionProgress, SinkProgress } from './sink-progress';
import { applyTransforms } from './transforms';

export const sinkGroup = (key: string): string => `svc-connect-sink-${key}`;

/** How often the group's committed offsets and the partitions' ends are read for the lag. */
const LAG_POLL_MS = 5000;
/** Most time between two attempts to join the group again. */
const REJOIN_MAX_MS = 10_000;
/** Heartbeat period while a batch is in hand (well under the session timeout). */
const HEARTBEAT_MS = 2000;

export class SinkRunner {
  #consumer: ConsumePort | null = null;
  #dlq: ProducePort | null = null;
  #stopping = false;
  #failed: Error | null = null;
  /** The topics the current consumer subscribed to. */
  #subscribed: string[] = [];
  #joining = false;
  readonly #progress = new SinkProgress();
  #lagTimer: NodeJS.Timeout | null = null;
  readonly #patterns: RegExp[];
  readonly #timeout: number;

  constructor(
    readonly def: Definition,
    readonly plugin: SinkPlugin,
    readonly kafka: KafkaPort,
    readonly metrics: Metrics,
    readonly tally: Tally,
    readonly log: Logger,
    /** Called once when the sink fails; the runtime sets status error. */
    readonly onFatal: (err: Error) => void,
    /** Called when the sink loses or regains the node; the runtime sets degraded or running. */
    readonly onHealth: (h: Health) => void,
  ) {
    this.#timeout = parseDuration(def.plugin_timeout)!;
    this.#patterns = (def.topics as SinkTopics[]).filter((b) => b.pattern !== '').map((b) => new RegExp(b.pattern.startsWith('^') ? b.pattern : `^(?:${b.pattern})`));
  }

  /**
   * Startup step 6: open() the plugin and join the consumer group. Joining is retried in the
   * background with backoff: connections are lazy (spec step 2), so an unreachable node shows
   * as fetch errors in the log and the sink as `degraded` with consumed_total at zero.
   */
  async start(): Promise<void> {
    await this.plugin.ready?.();
    await withTimeout(this.plugin.open({ key: this.def.key, timeoutMs: this.#timeout, log: (l, m) => this.log[l]({ plugin: true }, m) }, this.def.plugin_config), this.#timeout, 'plugin open()');
    if (this.def.error.tolerance === 'dlq') this.#dlq = await this.kafka.producer();
    void this.#join();
    this.#lagTimer = setInterval(() => void this.#pollLag(), LAG_POLL_MS);
    this.#lagTimer.unref();
  }

  /** Committed offset, end and lag of every partition read so far. */
  progress(): PartitionProgress[] {
    return this.#progress.snapshot();
  }

  async #pollLag(): Promise<void> {
    if (this.#subscribed.length === 0 || this.#stopping) return;
    try {
      this.#progress.polled(await this.kafka.groupPositions(sinkGroup(this.def.key), this.#subscribed));
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'cannot read the lag');
    }
  }

  /** Named topics plus every existing topic a pattern matches (anchored at the start). */
  async #resolveTopics(): Promise<string[]> {
    const blocks = this.def.topics as SinkTopics[];
    const names = blocks.flatMap((b) => b.names);
    if (this.#patterns.length > 0) for (const t of await this.kafka.topics()) if (this.#patterns.some((p) => p.test(t)) && !names.includes(t)) names.push(t);
    if (names.length === 0) throw new Error(`no topic matches ${this.#patterns.map(String).join(', ')} yet`);
    return names.sort();
  }

  /** Joins the group, retrying with backoff until it succeeds or the sink stops (one loop at a time). */
  async #join(): Promise<void> {
    if (this.#joining) return;
    this.#joining = true;
    try {
      const blocks = this.def.topics as SinkTopics[];
      for (let attempt = 0; !this.#stopping && this.#failed === null; attempt++) {
        try {
          const topics = await this.#resolveTopics();
          const consumer = await this.kafka.consumer({ group: sinkGroup(this.def.key), topics, fromBeginning: blocks.every((b) => b.start === 'earliest'), maxWaitMs: parseDuration(this.def.batch.poll_interval)! });
          if (this.#stopping) return void (await consumer.close().catch(() => undefined));
          this.#consumer = consumer;
          this.#subscribed = topics;
          await consumer.run((b, hb) => this.#handle(consumer, b, hb), { joined: () => this.#consumer === consumer && this.onHealth({ state: 'running' }), stopped: (err) => this.#lost(consumer, err) });
          if (this.#patterns.length > 0) void this.#watchTopics(consumer);
          return;
        } catch (err) {
          this.tally.add('errors');
          const reason = `cannot join the consumer group: ${(err as Error).message}`;
          this.onHealth({ state: 'degraded', reason });
          this.log.warn({ group: sinkGroup(this.def.key), err: (err as Error).message, attempt }, 'fetch error: cannot join the consumer group; retrying');
          await sleep(backoff(Math.min(attempt, 8), 200, REJOIN_MAX_MS));
        }
      }
    } finally {
      this.#joining = false;
    }
  }

  /**
   * The consumer stopped: for the plugin's failure (#handle already failed the sink) or because
   * the node could not be reached. In the second case the sink joins again with backoff.
   * Not awaited: this may run inside the consumer's own batch handler, which its close waits for.
   */
  #lost(consumer: ConsumePort, err: Error): void {
    if (this.#consumer !== consumer) return;
    this.#consumer = null;
    void consumer.close().catch(() => undefined);
    if (this.#stopping || this.#failed !== null) return;
    this.tally.add('errors');
    this.onHealth({ state: 'degraded', reason: `lost the node: ${err.message}` });
    this.log.warn({ group: sinkGroup(this.def.key), err: err.message }, 'lost the node; joining the consumer group again from the last commit');
    void sleep(backoff(0, 200, 1000)).then(() => this.#join());
  }

  /**
   * Patterns are matched continuously (spec: a sink's pattern covers topics created later):
   * every `topicRefreshMs` the runner lists the node's topics, and when a new one matches it
   * leaves the group (the batch in hand finishes and commits first) and joins again with the
   * larger set. A new topic is read from its start or its end as the block's `start` says.
   */
  async #watchTopics(consumer: ConsumePort): Promise<void> {
    while (!this.#stopping && this.#failed === null) {
      await sleep(this.kafka.topicRefreshMs);
      if (this.#stopping || this.#failed !== null || this.#consumer !== consumer) return;
      let now: string[];
      try {
        now = await this.#resolveTopics();
      } catch (err) {
        this.log.debug({ err: (err as Error).message }, 'topic refresh failed');
        continue;
      }
      const added = now.filter((t) => !this.#subscribed.includes(t));
      if (added.length === 0) continue;
      this.log.info({ topics: added }, 'pattern matches new topics; joining again');
      // The batch in hand still commits through this consumer while it closes.
      await this.#consumer?.close().catch(() => undefined);
      this.#consumer = null;
      if (!this.#stopping) void this.#join();
      return;
    }
  }

  #fail(err: Error): void {
    if (this.#stopping || this.#failed !== null) return;
    this.#failed = err;
    this.tally.add('errors');
    this.onFatal(err);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#lagTimer !== null) clearInterval(this.#lagTimer);
    await this.#consumer?.close().catch(() => undefined);
    await this.#dlq?.close().catch(() => undefined);
    await withTimeout(this.plugin.close(), this.#timeout, 'plugin close()').catch((err: Error) => this.log.warn({ err }, 'plugin close failed'));
  }

  /**
   * A plugin failure fails the connector at once (the client's own retries must not write the
   * batch again); a Kafka failure (commit, dead-letter produce) drops this consumer and joins
   * again, so the uncommitted records come again once, from the last commit.
   */
  async #handle(consumer: ConsumePort, b: FetchedBatch, heartbeat: () => Promise<void>): Promise<void> {
    if (this.#failed !== null || this.#stopping || this.#consumer !== consumer) throw this.#failed ?? new Error('consumer replaced');
    this.#progress.fetched(b.topic, b.partition, b.end, b.records);
    // A batch may take several plugin calls of up to plugin_timeout each: the member heartbeats
    // meanwhile, or the group would drop it after session_timeout_ms and refuse its commits.
    const beat = setInterval(() => void heartbeat().catch(() => undefined), HEARTBEAT_MS);
    try {
      await this.#handleBatch(consumer, b, heartbeat);
    } catch (err) {
      if (isKafkaError(err)) this.#lost(consumer, err as Error);
      else this.#fail(err as Error);
      throw err;
    } finally {
      clearInterval(beat);
    }
  }

  async #commit(consumer: ConsumePort, b: FetchedBatch, next: bigint): Promise<void> {
    await consumer.commit(b.topic, b.partition, next.toString());
    this.#progress.committed(b.topic, b.partition, next.toString(), b.records.find((r) => BigInt(r.offset) >= next));
  }

  async #handleBatch(consumer: ConsumePort, b: FetchedBatch, heartbeat: () => Promise<void>): Promise<void> {
    const t0 = process.hrtime.bigint();
    const key = this.def.key;
    this.tally.add('consumed', b.records.length);
    this.metrics.observe(key, 'sink', 'decode', b.decodeSeconds);
    const max = this.def.batch.max_records;
    for (let i = 0; i < b.records.length && !this.#stopping; i += max) {
      const chunk = b.records.slice(i, i + max);
      const tp = process.hrtime.bigint();
      const kept: SinkRecord[] = [];
      for (const r of chunk) {
        const v = applyTransforms(this.def.transforms, r.value);
        if (v === null) this.tally.add('filtered');
        else kept.push(v === r.value ? r : { ...r, value: v });
      }
      this.metrics.observe(key, 'sink', 'prepare', Number(process.hrtime.bigint() - tp) / 1e9);
      // Before a retry, what was delivered up to the first record not yet ok is flushed and
      // committed (records the transforms dropped count as done).
      let committed = BigInt(chunk[0]!.offset);
      const commitPrefix = async (notDone: Set<string>): Promise<void> => {
        let next = committed;
        for (const r of chunk) {
          if (notDone.has(r.offset)) break;
          next = BigInt(r.offset) + 1n;
        }
        if (next <= committed) return;
        await withTimeout(this.plugin.flush(), this.#timeout, 'plugin flush()');
        await this.#commit(consumer, b, next);
        committed = next;
      };
      const failed = kept.length > 0 ? await this.#writeWithRetries(kept, heartbeat, commitPrefix) : [];
      if (kept.length > 0) await withTimeout(this.plugin.flush(), this.#timeout, 'plugin flush()');
      if (failed.length > 0 && this.#dlq === null) {
        // No tolerance: commit what is contiguous before the first failed record, then stop.
        const first = failed[0]!.record;
        const before = BigInt(first.offset);
        if (before > committed) await this.#commit(consumer, b, before);
        throw new Error(`record ${b.topic}/${b.partition}@${first.offset} failed: ${failed[0]!.message}`);
      }
      if (failed.length > 0) await this.#deadLetter(failed);
      this.tally.add('processed', kept.length - failed.length);
      await this.#commit(consumer, b, BigInt(chunk[chunk.length - 1]!.offset) + 1n);
    }
    this.metrics.observe(key, 'sink', 'total', Number(process.hrtime.bigint() - t0) / 1e9);
  }

  /**
   * Writes, retrying retryable records; returns the records that stayed failed, in order. A
   * write that delivered some of its records does not use up an attempt (a plugin may deliver
   * part of a chunk per call, as the HTTP sink does within its time budget); before each retry
   * `progress` commits the delivered prefix.
   */
  async #writeWithRetries(records: SinkRecord[], heartbeat: () => Promise<void>, progress: (notDone: Set<string>) => Promise<void>): Promise<{ record: SinkRecord; message: string }[]> {
    const e = this.def.error;
    const failed: { record: SinkRecord; message: string }[] = [];
    let pending = records;
    for (let attempt = 0; pending.length > 0; attempt++) {
      const tf = process.hrtime.bigint();
      let results;
      try {
        results = await withTimeout(this.plugin.write(pending), this.#timeout, 'plugin write()');
      } catch (err) {
        // A write that throws says nothing per record: all of them are retryable.
        results = pending.map(() => ({ status: 'retryable' as const, message: (err as Error).message }));
        if (err instanceof PluginHostError || (err as Error).message.includes('timed out') || (err as Error).message.includes('plugin host')) throw err;
      }
      this.metrics.observe(this.def.key, 'sink', 'ffi', Number(process.hrtime.bigint() - tf) / 1e9);
      if (results.length !== pending.length) throw new Error(`plugin write() returned ${results.length} statuses for ${pending.length} records`);
      const retry: SinkRecord[] = [];
      results.forEach((r, i) => {
        const rec = pending[i]!;
        if (r.status === 'permanent') failed.push({ record: rec, message: r.message ?? 'permanent failure' });
        else if (r.status === 'retryable') retry.push(rec);
      });
      const delivered = results.some((r) => r.status === 'ok');
      if (retry.length > 0 && !delivered && attempt + 1 >= e.max_attempts) {
        for (const rec of retry) failed.push({ record: rec, message: `still failing after ${e.max_attempts} attempts: ${results[pending.indexOf(rec)]?.message ?? 'retryable'}` });
        break;
      }
      if (retry.length > 0) {
        await progress(new Set([...retry, ...failed.map((f) => f.record)].map((r) => r.offset)));
        if (delivered) attempt = -1;
        this.tally.add('retries', retry.length);
        await sleep(backoff(Math.max(0, attempt), parseDuration(e.initial_backoff)!, parseDuration(e.max_backoff)!));
        await heartbeat().catch(() => undefined);
      }
      pending = retry;
    }
    return failed.sort((a, b) => (BigInt(a.record.offset) < BigInt(b.record.offset) ? -1 : 1));
  }

  /** Sends failed records to the dead-letter topic and awaits the node's ack (before any commit). */
  async #deadLetter(failed: { record: SinkRecord; message: string }[]): Promise<void> {
    await this.#dlq!.send(
      this.def.error.dlq_topic,
      failed.map(({ record: r, message }) => ({
        key: r.key,
        value: r.value,
        timestamp: r.timestamp,
        headers: { ...r.headers, 'svc-dlq-topic': r.topic, 'svc-dlq-partition': String(r.partition), 'svc-dlq-offset': r.offset, 'svc-dlq-error': message.slice(0, 1000), 'svc-dlq-connector': this.def.key },
      })),
    );
    this.tally.add('dead_lettered', failed.length);
  }
}
