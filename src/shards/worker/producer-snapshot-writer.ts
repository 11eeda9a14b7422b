/**
 * The owner's side of producer snapshots (docs/objects.md, "Producer state across a move"): so
 * that a new owner replays the batch headers of the last few MiB of a stream, not of all of it.
 *
 *   ledger commit recorded entries of a stream ──▶ bytes since its last snapshot
 *        ≥ everyBytes ──▶ (one at a time per writer) its durable producers as of its applied next seq
 *        ──▶ inline ≤ INLINE_MAX, else PUT p/<node>/<nodeEpoch>/<worker>/<n> (a JSON snapshot)
 *        ──▶ ledger.recordProducerSnapshot: p/<stream> under the stream's fence
 *
 * `durableProducers` and `nextSeq` move together as each batch is applied, in log order, so the
 * pair read at one moment is a table "as of seq": every batch below it applied, none above
 * (producer-snapshot.ts). A stream whose producers are still being replayed after an adopt, or
 * that is being sealed, is left for later: a seal's producer rides on a frame at the stream's
 * end, which the replay applies only from entries after the snapshot. A snapshot the fence
 * refuses is dropped (the stream moved), one that failed (an outage) is due again at the next
 * commit of the stream. Nothing here is on an append's path.
 */
import { type Ledger, type PutOptions, type ProducerSnapshotRecord, producerObjectKey } from '../../objects';
import { encodeProducerSnapshot } from './producer-snapshot';
import { encodeProducers } from './producers';
import { type StreamState } from './stream-state';

/** Bytes a stream's entries may grow by before its producers are snapshotted again (design: 16 MiB). */
export const SNAPSHOT_EVERY_BYTES = 16 << 20;
/** A snapshot this small (its JSON) goes inline in `p/<stream>`; a larger one in an object. */
export const INLINE_MAX = 8 << 10;

const FRESH: PutOptions = { fresh: true };

export interface ProducerSnapshotWriterOptions {
  store: {
    put(key: string, body: Buffer, options?: PutOptions): Promise<void>;
    list(prefix: string): AsyncIterable<{ key: string }>;
  };
  ledger: Pick<Ledger, 'recordProducerSnapshot'>;
  nodeId: number;
  nodeEpoch: number;
  shardId: number;
  everyBytes?: number;
  /** A snapshot that failed (not fenced): logged, and due again later. */
  failed?(stream: string, err: unknown): void;
}

export class ProducerSnapshotWriter {
  readonly #o: ProducerSnapshotWriterOptions;
  readonly #every: number;
  /** Bytes recorded per stream since its last snapshot. */
  readonly #since = new WeakMap<StreamState, number>();
  readonly #due = new Set<StreamState>();
  #running = false;
  /** The next snapshot object's number; null until this run's objects were listed (a worker started again keeps its node epoch). */
  #counter: number | null = null;
  /** Snapshots recorded by this writer (tests, stats). */
  written = 0;

  constructor(o: ProducerSnapshotWriterOptions) {
    this.#o = o;
    this.#every = o.everyBytes ?? SNAPSHOT_EVERY_BYTES;
  }

  /** Entries of `s` holding `bytes` more were recorded (or replayed, after an adopt). */
  recorded(s: StreamState, bytes: number): void {
    const n = (this.#since.get(s) ?? 0) + bytes;
    this.#since.set(s, n);
    if (n < this.#every) return;
    this.#due.add(s);
    if (!this.#running) void this.#run();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      for (const s of this.#due) {
        this.#due.delete(s);
        await this.#write(s);
      }
    } finally {
      this.#running = false;
    }
  }

  async #write(s: StreamState): Promise<void> {
    const l = s.ledger;
    if (s.deleted || l === undefined || l.moved !== null) {
      this.#since.delete(s);
      return;
    }
    if (s.closing || (s.remote?.producersPending ?? null) !== null) return; // later: its next commit brings it back
    const seq = s.nextSeq;
    const producers = encodeProducers(s.durableProducers);
    const fence = { ...l.fence };
    const since = this.#since.get(s) ?? 0;
    this.#since.set(s, 0);
    try {
      let rec: ProducerSnapshotRecord = { seq, producers };
      if (JSON.stringify(rec).length > INLINE_MAX) {
        const body = encodeProducerSnapshot(s.durableProducers, seq);
        const o = await this.#nextKey();
        await this.#o.store.put(o, body, FRESH);
        rec = { seq, o, bytes: body.length };
      }
      if (await this.#o.ledger.recordProducerSnapshot(s.meta.name, fence, rec)) this.written++;
    } catch (err) {
      this.#since.set(s, (this.#since.get(s) ?? 0) + since);
      this.#o.failed?.(s.meta.name, err);
    }
  }

  async #nextKey(): Promise<string> {
    const { nodeId, nodeEpoch, shardId } = this.#o;
    if (this.#counter === null) {
      const prefix = producerObjectKey(nodeId, nodeEpoch, shardId, 0).replace(/\d+$/, '');
      let last = -1;
      for await (const { key } of this.#o.store.list(prefix)) last = Math.max(last, Number(key.slice(prefix.length)));
      this.#counter = last + 1;
    }
    return producerObjectKey(nodeId, nodeEpoch, shardId, this.#counter++);
  }
}
