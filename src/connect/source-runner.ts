/**
 * Runs one source (design "Delivery semantics"), one batch in flight:
 *
 *   poll → transforms → produce, await acks → save checkpoint → commit(ack)
 *            produce fails → commit(nack), backoff; 30 consecutive nacks → status error
 *            save fails    → the next batch is held while the save is retried; out of
 *                            attempts → status error (the old checkpoint stays: the batch
 *                            comes again after a restart, the one place duplicates appear)
 *
 * A checkpoint is never saved before the node acknowledged the records it covers.
 */
import type { Definition, SourceTopics } from './definition-schema';
import { backoff, parseDuration, sleep } from './duration';
import type { KafkaPort, ProducePort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import type { SourcePlugin, SourceRecord } from './plugin-api';
import type { StateStore } from './state-store';
import { type Tally, withTimeout } from './connector-state';
import { applyTransforms } from './transforms';

/** Spec "States and transitions": a source goes to error after thirty consecutive nacks. */
export const MAX_CONSECUTIVE_NACKS = 30;

export class SourceRunner {
  #producer: ProducePort | null = null;
  #stopping = false;
  #loop: Promise<void> | null = null;
  readonly #timeout: number;

  constructor(
    readonly def: Definition,
    readonly plugin: SourcePlugin,
    readonly kafka: KafkaPort,
    readonly store: StateStore,
    readonly metrics: Metrics,
    readonly tally: Tally,
    readonly log: Logger,
    readonly onFatal: (err: Error) => void,
  ) {
    this.#timeout = parseDuration(def.plugin_timeout)!;
  }

  /** Startup step 5: load the checkpoint and open() the plugin; then start polling. */
  async start(): Promise<void> {
    const { state, where } = await this.store.load(this.def.key);
    if (state === null) {
      this.log.warn({ checkpoint: where }, 'no checkpoint for this source: it starts from the beginning (if it ran before, the state volume is not mounted or its key changed; state is filed by key)');
    }
    await withTimeout(this.plugin.open({ key: this.def.key, log: (l, m) => this.log[l]({ plugin: true }, m) }, this.def.plugin_config, state), this.#timeout, 'plugin open()');
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
      if (batch === null) continue;
      const td = process.hrtime.bigint();
      this.metrics.observe(key, 'source', 'decode', Number(td - t0) / 1e9);
      this.tally.add('produced', batch.records.length);
      const records: SourceRecord[] = [];
      for (const r of batch.records) {
        const v = applyTransforms(this.def.transforms, r.value);
        if (v === null) this.tally.add('filtered');
        else records.push(v === r.value ? r : { ...r, value: v });
      }
      const tp = process.hrtime.bigint();
      this.metrics.observe(key, 'source', 'prepare', Number(tp - td) / 1e9);
      if (records.length > 0) {
        try {
          await this.#producer!.send(topic, records, partition);
        } catch (err) {
          nacks++;
          this.tally.add('errors');
          await this.plugin.commit(false);
          this.log.warn({ err, consecutive_nacks: nacks }, 'produce failed; the batch will be polled again');
          if (nacks >= MAX_CONSECUTIVE_NACKS) throw new Error(`${nacks} consecutive produce failures; last: ${(err as Error).message}`, { cause: err });
          this.tally.add('retries');
          await sleep(backoff(Math.min(nacks - 1, 10), parseDuration(e.initial_backoff)!, parseDuration(e.max_backoff)!));
          continue;
        }
        this.tally.add('sent', records.length);
      }
      nacks = 0;
      const ts = process.hrtime.bigint();
      this.metrics.observe(key, 'source', 'broker_send', Number(ts - tp) / 1e9);
      await this.#save(batch.state);
      this.metrics.observe(key, 'source', 'state_save', Number(process.hrtime.bigint() - ts) / 1e9);
      await this.plugin.commit(true);
      this.metrics.observe(key, 'source', 'total', Number(process.hrtime.bigint() - t0) / 1e9);
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
