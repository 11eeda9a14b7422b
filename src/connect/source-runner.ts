/**
 * Runs one source (design "Delivery semantics"), one batch in flight:
 *
 *   poll → transforms → produce, await acks → save checkpoint → commit(ack)
 *            produce fails → commit(nack), a new producer, backoff; status `degraded` from
 *                            the first nack until an ack, retried forever (a node restart
 *                            or a network cut must not need an operator)
 *            save fails    → the next batch is held while the save is retried; out of
 *                            attempts → status error (the old checkpoint stays: the batch
 *                            comes again after a restart, the one place duplicates appear)
 *
 * A checkpoint is never saved before the node acknowledged the records it covers. Each record
 * carries `svc-source: <key>@<seq>` and each checkpoint the seq and partition offsets past the
 * batch (source-position.ts), so after a crash between produce and save the records that had
 * landed are found at startup and not produced again: a crash costs no source duplicate.
 */
import type { Definition, SourceTopics } from './definition-schema';
import { backoff, parseDuration, sleep } from './duration';
import type { KafkaPort, ProducePort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import type { SourcePlugin, SourceRecord } from './plugin-api';
import { decodeCheckpoint, encodeCheckpoint, seqOf, SOURCE_HEADER, sourceHeader } from './source-position';
import type { StateStore } from './state-store';
import { type Health, type Tally, withTimeout } from './connector-state';
import { applyTransforms } from './transforms';

/**
 * The spec sends a source to error after thirty consecutive nacks; this runtime keeps retrying
 * and reports `degraded` instead (docs/connectors.md "Reconnection and degraded"). From this many
 * consecutive nacks on, the backoff stays at its maximum.
 */
const NACKS_TO_MAX_BACKOFF = 10;

/** How long the startup read-back of records produced before a crash may take. */
const READ_BACK_MS = 30_000;
/** How often the position takes the topic's end offsets (one metadata round trip). */
const SNAPSHOT_MS = 10_000;

const sameBytes = (a: Buffer | null, b: Buffer | null): boolean => (a === null || b === null ? a === b : a.equals(b));

export class SourceRunner {
  #producer: ProducePort | null = null;
  #stopping = false;
  #loop: Promise<void> | null = null;
  readonly #timeout: number;
  /** seq of the next record the plugin gives (source-position.ts). */
  #seq = 0;
  /** Per partition, an offset at or below which every record after the last checkpoint is. */
  #pos: Record<string, string> = {};
  /** When #pos last took the topic's end offsets (ms since epoch; 0 = not yet in this run). */
  #snapshotAt = 0;
  /** Records produced before a crash and not covered by the checkpoint, by seq: not produced again. */
  #landed: Map<number, { key: Buffer | null; value: Buffer }> | null = null;

  constructor(
    readonly def: Definition,
    readonly plugin: SourcePlugin,
    readonly kafka: KafkaPort,
    readonly store: StateStore,
    readonly metrics: Metrics,
    readonly tally: Tally,
    readonly log: Logger,
    readonly onFatal: (err: Error) => void,
    /** Called when produces start failing (degraded) and when they succeed again (running). */
    readonly onHealth: (h: Health) => void,
  ) {
    this.#timeout = parseDuration(def.plugin_timeout)!;
  }

  /** Startup step 5: load the checkpoint and open() the plugin; then start polling. */
  async start(): Promise<void> {
    const { state: saved, where } = await this.store.load(this.def.key);
    const { state, position } = saved === null ? { state: null, position: null } : decodeCheckpoint(saved);
    if (position !== null) {
      this.#seq = position.seq;
      this.#pos = position.pos;
      await this.#readBack();
    }
    if (state === null) {
      this.log.warn({ checkpoint: where }, 'no checkpoint for this source: it starts from the beginning (if it ran before, the state volume is not mounted or its key changed; state is filed by key)');
    }
    await this.plugin.ready?.();
    await withTimeout(this.plugin.open({ key: this.def.key, timeoutMs: this.#timeout, log: (l, m) => this.log[l]({ plugin: true }, m) }, this.def.plugin_config, state), this.#timeout, 'plugin open()');
    this.#producer = await this.kafka.producer();
    this.#loop = this.#run().catch((err: Error) => {
      if (this.#stopping) return;
      this.tally.add('errors');
      this.onFatal(err);
    });
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop;
    await this.#producer?.close().catch(() => undefined);
    await withTimeout(this.plugin.close(), this.#timeout, 'plugin close()').catch((err: Error) => this.log.warn({ err }, 'plugin close failed'));
  }

  /**
   * Startup after a checkpoint with a position: reads every partition from the checkpoint's
   * offsets to its end and keeps this source's records at or past its seq (produced, then the
   * runtime stopped before the save). Best effort: a read that fails or times out keeps what it
   * found, and the rest may be produced again (duplicates, never loss).
   */
  async #readBack(): Promise<void> {
    const topic = (this.def.topics[0] as SourceTopics).name;
    const landed = new Map<number, { key: Buffer | null; value: Buffer }>();
    let complete = false;
    try {
      complete = await this.kafka.readRange({ group: `svc-connect-source-${this.def.key}`, topic, from: this.#pos, timeoutMs: READ_BACK_MS }, (r) => {
        const seq = seqOf(this.def.key, r.headers[SOURCE_HEADER]);
        if (seq !== null && seq >= this.#seq) landed.set(seq, { key: r.key, value: r.value });
      });
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'cannot read back the records produced after the checkpoint; they may be produced again');
    }
    if (!complete) this.log.warn({ topic }, 'the read-back of records produced after the checkpoint did not reach the end; some may be produced again');
    if (landed.size > 0) {
      this.#landed = landed;
      this.log.info({ records: landed.size, from_seq: this.#seq }, 'records produced after the last checkpoint are in the topic already; they will not be produced again');
    }
  }

  async #run(): Promise<void> {
    const key = this.def.key;
    const topic = (this.def.topics[0] as SourceTopics).name;
    const partition = (this.def.topics[0] as SourceTopics).partition;
    const pollMs = parseDuration(this.def.batch.poll_interval)!;
    const e = this.def.error;
    let nacks = 0;
    while (!this.#stopping) {
      const t0 = process.hrtime.bigint();
      const batch = await withTimeout(this.plugin.poll(this.def.batch.max_records, pollMs), this.#timeout + pollMs, 'plugin poll()');
      if (batch === null) {
        // A plugin that says "no data" at once, without waiting its poll_interval, would turn
        // this loop into a spin (and, called in process, starve the event loop): wait the rest.
        const left = pollMs - Number(process.hrtime.bigint() - t0) / 1e6;
        await sleep(left > 1 ? left : 1);
        continue;
      }
      const td = process.hrtime.bigint();
      this.metrics.observe(key, 'source', 'decode', Number(td - t0) / 1e9);
      this.tally.add('produced', batch.records.length);
      const records: SourceRecord[] = [];
      let already = 0;
      batch.records.forEach((r, j) => {
        const v = applyTransforms(this.def.transforms, r.value);
        if (v === null) return void this.tally.add('filtered');
        const seq = this.#seq + j;
        const landed = this.#landed?.get(seq);
        if (landed !== undefined) {
          // Produced before the crash. The plugin gives the same records after a restart from
          // a checkpoint (the SourcePlugin contract); the value may differ in a field such as a
          // generation time, the key may not: a different key means the plugin does not
          // replay, and nothing more is skipped (duplicates rather than a lost record).
          if (sameBytes(landed.key, r.key)) return void already++;
          this.log.warn({ seq }, 'a record given after the restart differs in key from the one produced before it; no more records are skipped');
          this.#landed = null;
        }
        records.push({ ...r, value: v, headers: { ...r.headers, [SOURCE_HEADER]: sourceHeader(key, seq) } });
      });
      const tp = process.hrtime.bigint();
      this.metrics.observe(key, 'source', 'prepare', Number(tp - td) / 1e9);
      if (records.length > 0) {
        try {
          Object.assign(this.#pos, await this.#producer!.send(topic, records, partition));
        } catch (err) {
          nacks++;
          this.tally.add('errors');
          await this.plugin.commit(false);
          this.log.warn({ err: (err as Error).message, consecutive_nacks: nacks }, 'produce failed; the batch will be polled again');
          this.onHealth({ state: 'degraded', reason: `${nacks} consecutive produce failures; last: ${(err as Error).message}` });
          // A client that lost its connection mid-request may not find its way back: start afresh.
          const old = this.#producer;
          this.#producer = await this.kafka.producer();
          void old?.close().catch(() => undefined);
          this.tally.add('retries');
          await sleep(backoff(Math.min(nacks - 1, NACKS_TO_MAX_BACKOFF), parseDuration(e.initial_backoff)!, parseDuration(e.max_backoff)!));
          continue;
        }
        this.tally.add('sent', records.length);
      }
      if (nacks > 0) this.onHealth({ state: 'running' });
      nacks = 0;
      if (already > 0) this.log.info({ records: already }, 'records already produced before the restart were skipped');
      this.#seq += batch.records.length;
      if (this.#landed !== null) {
        for (const s of this.#landed.keys()) if (s < this.#seq) this.#landed.delete(s);
        if (this.#landed.size === 0) this.#landed = null;
      }
      this.metrics.observe(key, 'source', 'broker_send', Number(process.hrtime.bigint() - tp) / 1e9);
      await this.#snapshotEnds(topic);
      const ts = process.hrtime.bigint();
      await this.#save(encodeCheckpoint(batch.state, { seq: this.#seq, pos: this.#pos }));
      this.metrics.observe(key, 'source', 'state_save', Number(process.hrtime.bigint() - ts) / 1e9);
      await this.plugin.commit(true);
      this.metrics.observe(key, 'source', 'total', Number(process.hrtime.bigint() - t0) / 1e9);
    }
  }

  /**
   * After an acknowledged batch and before the next produce, every record of this source is
   * below each partition's end offset, so the end offsets are a valid position for all
   * partitions. Taken after the first batch of a run and then every SNAPSHOT_MS, so a later
   * read-back does not read what other producers wrote to partitions this source has not
   * written lately. Best effort.
   */
  async #snapshotEnds(topic: string): Promise<void> {
    if (Date.now() - this.#snapshotAt < SNAPSHOT_MS) return;
    this.#snapshotAt = Date.now();
    try {
      Object.assign(this.#pos, await this.kafka.endOffsets(topic));
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'cannot read the end offsets of the topic');
    }
  }

  /** Holds the next batch until the checkpoint is saved. */
  async #save(state: Buffer): Promise<void> {
    const e = this.def.error;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.save(this.def.key, state);
        return;
      } catch (err) {
        this.tally.add('errors');
        if (attempt + 1 >= e.max_attempts) throw new Error(`checkpoint save failed after ${e.max_attempts} attempts: ${(err as Error).message}`, { cause: err });
        this.log.warn({ err }, 'checkpoint save failed; retrying before the next batch');
        this.tally.add('retries');
        await sleep(backoff(attempt, parseDuration(e.initial_backoff)!, parseDuration(e.max_backoff)!));
      }
    }
  }
}
