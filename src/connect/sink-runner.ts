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
 */
import { type Definition, type SinkTopics } from './definition-schema';
import { backoff, parseDuration, sleep } from './duration';
import type { ConsumePort, FetchedBatch, KafkaPort, ProducePort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import { PluginHostError } from './native';
import type { SinkPlugin, SinkRecord } from './plugin-api';
import { type Tally, withTimeout } from './connector-state';
import { applyTransforms } from './transforms';

export const sinkGroup = (key: string): string => `svc-connect-sink-${key}`;

export class SinkRunner {
  #consumer: ConsumePort | null = null;
  #dlq: ProducePort | null = null;
  #stopping = false;
  #failed: Error | null = null;
  /** The topics the current consumer subscribed to. */
  #subscribed: string[] = [];
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
  ) {
    this.#timeout = parseDuration(def.plugin_timeout)!;
    this.#patterns = (def.topics as SinkTopics[]).filter((b) => b.pattern !== '').map((b) => new RegExp(b.pattern.startsWith('^') ? b.pattern : `^(?:${b.pattern})`));
  }

  /**
   * Startup step 6: open() the plugin and join the consumer group. Joining is retried in the
   * background with backoff: connections are lazy (spec step 2), so an unreachable node shows
   * as fetch errors in the log while the sink stays `running` with consumed_total at zero.
   */
  async start(): Promise<void> {
    await withTimeout(this.plugin.open({ key: this.def.key, log: (l, m) => this.log[l]({ plugin: true }, m) }, this.def.plugin_config), this.#timeout, 'plugin open()');
    if (this.def.error.tolerance === 'dlq') this.#dlq = await this.kafka.producer();
    void this.#join();
  }

  /** Named topics plus every existing topic a pattern matches (anchored at the start). */
  async #resolveTopics(): Promise<string[]> {
    const blocks = this.def.topics as SinkTopics[];
    const names = blocks.flatMap((b) => b.names);
    if (this.#patterns.length > 0) for (const t of await this.kafka.topics()) if (this.#patterns.some((p) => p.test(t)) && !names.includes(t)) names.push(t);
    if (names.length === 0) throw new Error(`no topic matches ${this.#patterns.map(String).join(', ')} yet`);
    return names.sort();
  }

  async #join(): Promise<void> {
    const blocks = this.def.topics as SinkTopics[];
    for (let attempt = 0; !this.#stopping; attempt++) {
      try {
        const topics = await this.#resolveTopics();
        const consumer = await this.kafka.consumer({ group: sinkGroup(this.def.key), topics, fromBeginning: blocks.every((b) => b.start === 'earliest'), maxWaitMs: parseDuration(this.def.batch.poll_interval)! });
        if (this.#stopping) return void (await consumer.close().catch(() => undefined));
        this.#consumer = consumer;
        this.#subscribed = topics;
        await consumer.run((b, hb) => this.#handle(b, hb), (err) => this.#fail(err));
        if (this.#patterns.length > 0) void this.#watchTopics();
        return;
      } catch (err) {
        this.tally.add('errors');
        this.log.warn({ group: sinkGroup(this.def.key), err: (err as Error).message }, 'fetch error: cannot join the consumer group; retrying');
        await sleep(backoff(Math.min(attempt, 8), 200, 10_000));
      }
    }
  }

  /**
   * Patterns are matched continuously (spec: a sink's pattern covers topics created later):
   * every `topicRefreshMs` the runner lists the node's topics, and when a new one matches it
   * leaves the group (the batch in hand finishes and commits first) and joins again with the
   * larger set. A new topic is read from its start or its end as the block's `start` says.
   */
  async #watchTopics(): Promise<void> {
    while (!this.#stopping && this.#failed === null) {
      await sleep(this.kafka.topicRefreshMs);
      if (this.#stopping || this.#failed !== null) return;
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
    await this.#consumer?.close().catch(() => undefined);
    await this.#dlq?.close().catch(() => undefined);
    await withTimeout(this.plugin.close(), this.#timeout, 'plugin close()').catch((err: Error) => this.log.warn({ err }, 'plugin close failed'));
  }

  /** A failure fails the connector at once (the client's own retries must not write the batch again). */
  async #handle(b: FetchedBatch, heartbeat: () => Promise<void>): Promise<void> {
    if (this.#failed !== null || this.#stopping) throw this.#failed ?? new Error('sink stopping');
    try {
      await this.#handleBatch(b, heartbeat);
    } catch (err) {
      this.#fail(err as Error);
      throw err;
    }
  }

  async #handleBatch(b: FetchedBatch, heartbeat: () => Promise<void>): Promise<void> {
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
      const failed = kept.length > 0 ? await this.#writeWithRetries(kept, heartbeat) : [];
      if (kept.length > 0) await withTimeout(this.plugin.flush(), this.#timeout, 'plugin flush()');
      if (failed.length > 0 && this.#dlq === null) {
        // No tolerance: commit what is contiguous before the first failed record, then stop.
        const first = failed[0]!.record;
        const before = BigInt(first.offset);
        if (before > BigInt(chunk[0]!.offset)) await this.#consumer!.commit(b.topic, b.partition, before.toString());
        throw new Error(`record ${b.topic}/${b.partition}@${first.offset} failed: ${failed[0]!.message}`);
      }
      if (failed.length > 0) await this.#deadLetter(failed);
      this.tally.add('processed', kept.length - failed.length);
      await this.#consumer!.commit(b.topic, b.partition, (BigInt(chunk[chunk.length - 1]!.offset) + 1n).toString());
    }
    this.metrics.observe(key, 'sink', 'total', Number(process.hrtime.bigint() - t0) / 1e9);
  }

  /** Writes, retrying retryable records; returns the records that stayed failed, in order. */
  async #writeWithRetries(records: SinkRecord[], heartbeat: () => Promise<void>): Promise<{ record: SinkRecord; message: string }[]> {
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
      if (retry.length > 0 && attempt + 1 >= e.max_attempts) {
        for (const rec of retry) failed.push({ record: rec, message: `still failing after ${e.max_attempts} attempts: ${results[pending.indexOf(rec)]?.message ?? 'retryable'}` });
        break;
      }
      if (retry.length > 0) {
        this.tally.add('retries', retry.length);
        await sleep(backoff(attempt, parseDuration(e.initial_backoff)!, parseDuration(e.max_backoff)!));
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
