/**
 * Producer ids for InitProducerId, unique across the nodes that share a metadata store and across
 * restarts. As Kafka's brokers do (KIP-730), each node takes blocks of ids from one counter in the
 * metadata (`kafka/producer-ids`: the first id no node has taken yet), claimed by compare-and-set,
 * and hands them out from memory; a block is asked for only when the last one ran out. A node that
 * stops forgets the rest of its block: ids are never handed out twice, only skipped.
 *
 * The counter starts at the allocation time in milliseconds times 4096, which is above every id
 * the earlier, clock-based allocator of a single node handed out. Ids stay below 2^62, the start
 * of the HTTP producers' range (shards/worker/producers.ts); with today's clock they are near 2^53.
 */
import { type MetaStore, MetaConflictError } from '../actors';

const KEY = 'kafka/producer-ids';
/** Ids a node takes at a time: one metadata write per this many producers. */
export const PRODUCER_ID_BLOCK = 1000n;

interface Counter {
  /** The first id not taken yet, as a decimal string (int64). */
  next: string;
}

export class ProducerIds {
  readonly #meta: MetaStore;
  readonly #now: () => number;
  #next = 0n;
  #end = 0n;
  /** The block being claimed, shared by the callers that wait for it. */
  #claiming: Promise<void> | null = null;

  constructor(meta: MetaStore, now: () => number = Date.now) {
    this.#meta = meta;
    this.#now = now;
  }

  async next(): Promise<bigint> {
    while (this.#next >= this.#end) {
      this.#claiming ??= this.#claim().finally(() => {
        this.#claiming = null;
      });
      await this.#claiming;
    }
    return this.#next++;
  }

  async #claim(): Promise<void> {
    for (;;) {
      const rec = this.#meta.get<Counter>(KEY);
      const start = rec === null ? BigInt(this.#now()) * 4096n : BigInt(rec.value.next);
      try {
        await this.#meta.put<Counter>(KEY, { next: (start + PRODUCER_ID_BLOCK).toString() }, rec === null ? { absent: true } : { version: rec.version });
        this.#next = start;
        this.#end = start + PRODUCER_ID_BLOCK;
        return;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
        // Another node took that block: read the counter as it is now, and try again.
        await this.#meta.sync();
      }
    }
  }
}
