/**
 * The Kafka listener's side of a share partition (KIP-932 over src/actors/share): acquire records
 * for a member (ShareFetch) and apply its acknowledgement batches (ShareFetch, ShareAcknowledge),
 * on the same `ShareStates` the Svc listener's `/_share/{stream}` leases from, so a Kafka member
 * and an HTTP reader of one group share the records: each record is locked to one of them at a
 * time, under the member id (Kafka) or the lease id (HTTP).
 *
 * Records are found the way HTTP leases find them (the `json` read format: committed records
 * only, so transaction markers and aborted records are never acquired), and handed to the client
 * as the stored batches that hold them (`kafka` read format); the client keeps only the offsets of
 * its AcquiredRecords, as with a Kafka broker.
 */
import { type AckType, type Acquired, type ShareGroupConfig, type ShareStates, deadLetter, limitsOf, runsOf } from '../../actors';
import { type ShardClient } from '../../shards';

/** Acknowledge types on the wire (KIP-932): 0 gap, 1 accept, 2 release, 3 reject. */
const ACK_TYPES: ReadonlyArray<AckType | 'gap'> = ['gap', 'accept', 'release', 'reject'];

/** The widest acknowledgement batch taken (offsets); a wider one is INVALID_REQUEST. */
export const MAX_ACK_SPAN = 100_000;

/** An acknowledgement batch as the wire carries it. */
export interface AckBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeTypes: number[];
}

/** What acquiring gave: the acquired ranges (runs of consecutive offsets of one delivery count) and the batches that hold them. */
export interface AcquiredSet {
  ranges: Array<{ firstOffset: number; lastOffset: number; deliveryCount: number }>;
  records: Buffer;
  /** Where the stream's tail was when looked at: a fetch that found nothing waits for it to move. */
  wait: { seq: number; streamId: number } | null;
}

/** The acknowledgements of a request as offsets and types, or why they are malformed. */
export function parseAckBatches(batches: readonly AckBatch[]): { acks: Array<{ offset: number; type: AckType }> } | { invalid: string } {
  const acks: Array<{ offset: number; type: AckType }> = [];
  let prevLast = -1;
  for (const b of batches) {
    const first = Number(b.firstOffset);
    const last = Number(b.lastOffset);
    if (first < 0 || last < first || last - first >= MAX_ACK_SPAN) return { invalid: `acknowledgement batch [${first}, ${last}] is not a range of at most ${MAX_ACK_SPAN} offsets` };
    if (first <= prevLast) return { invalid: 'acknowledgement batches overlap or are out of order' };
    prevLast = last;
    const n = last - first + 1;
    // One type for the whole batch, or one per offset.
    if (b.acknowledgeTypes.length !== 1 && b.acknowledgeTypes.length !== n) return { invalid: `acknowledgement batch [${first}, ${last}] has ${b.acknowledgeTypes.length} types, not 1 or ${n}` };
    for (let i = 0; i < n; i++) {
      const t = ACK_TYPES[b.acknowledgeTypes.length === 1 ? b.acknowledgeTypes[0]! : b.acknowledgeTypes[i]!];
      if (t === undefined) return { invalid: 'acknowledge types are 0 (gap), 1 (accept), 2 (release) or 3 (reject)' };
      if (t !== 'gap') acks.push({ offset: first + i, type: t });
    }
  }
  return { acks };
}

export class KafkaSharePartitions {
  readonly #shards: ShardClient;
  readonly #states: ShareStates;
  /** Bytes of one `json` read when finding records by seq. */
  readonly #pageBytes: number;

  constructor(shards: ShardClient, states: ShareStates, pageBytes: number) {
    this.#shards = shards;
    this.#states = states;
    this.#pageBytes = pageBytes;
  }

  /** Where a partition the group never saw starts: its config's `share.auto.offset.reset`. */
  #init(group: string, stream: string): () => Promise<number> {
    return async () => {
      const s = await this.#shards.head(stream);
      return this.#states.config(group)['share.auto.offset.reset'] === 'earliest' ? s.startSeq : s.nextSeq;
    };
  }

  #deadLetter(config: ShareGroupConfig, group: string, stream: string, archived: readonly Acquired[]): Promise<void> {
    return deadLetter(this.#shards, this.#pageBytes, config, group, stream, archived);
  }

  /**
   * Acquire up to `maxRecords` records of `stream` for `memberId` under the group's lock duration:
   * redeliveries first, then records never delivered. `maxBytes` bounds the reads.
   */
  async acquire(group: string, memberId: string, stream: string, maxRecords: number, maxBytes: number): Promise<AcquiredSet> {
    const bytes = Math.max(1, Math.min(maxBytes, this.#pageBytes));
    const got = await this.#states.run(group, stream, this.#init(group, stream), async (p, config) => {
      const limits = limitsOf(config);
      const now = Date.now();
      const lockUntil = now + config['group.share.record.lock.duration.ms'];
      const before = [p.start, p.end, p.acquiredCount];
      await this.#deadLetter(config, group, stream, p.expire(now, limits));
      const acquired = p.acquireAvailable(maxRecords, memberId, lockUntil, limits);
      const room = Math.min(maxRecords - acquired.length, p.room(limits));
      let wait: AcquiredSet['wait'] = null;
      if (room > 0) {
        const r = await this.#shards.read({ name: stream, seq: p.end, count: room, bytes, format: 'json' });
        if (r.startSeq > p.end) p.skipTo(r.startSeq);
        const fresh = JSON.parse(r.body.toString('utf8')) as Array<{ seq: number }>;
        acquired.push(
          ...p.acquireNew(
            fresh.map((x) => x.seq),
            Math.max(p.end, r.nextSeq),
            memberId,
            lockUntil,
          ),
        );
        wait = { seq: Math.max(p.end, r.nextSeq), streamId: r.streamId };
      }
      // A fetch that found nothing and ended no lock writes nothing (a waiting consumer polls often).
      const changed = acquired.length > 0 || p.start !== before[0] || p.end !== before[1] || p.acquiredCount !== before[2];
      return { result: { acquired, wait }, changed };
    });
    const acquired = got.acquired.sort((a, b) => a.offset - b.offset);
    return { ranges: rangesOf(acquired), records: await this.#batches(stream, acquired, bytes), wait: got.wait };
  }

  /** Apply `memberId`'s acknowledgements of `stream`: false when one was refused (INVALID_RECORD_STATE). */
  async acknowledge(group: string, memberId: string, stream: string, acks: ReadonlyArray<{ offset: number; type: AckType }>): Promise<boolean> {
    if (acks.length === 0) return true;
    const res = await this.#states.run(group, stream, this.#init(group, stream), async (p, config) => {
      const limits = limitsOf(config);
      const now = Date.now();
      const expired = p.expire(now, limits);
      const r = p.acknowledge(memberId, acks, now, limits);
      await this.#deadLetter(config, group, stream, [...expired, ...r.archived]);
      return { result: r, changed: true };
    });
    return res.refused.length === 0;
  }

  /** Give back every lock `memberId` holds on `streams` (its share session closed, or it left the group). */
  async releaseAll(group: string, memberId: string, streams: Iterable<string>): Promise<void> {
    for (const stream of streams) {
      await this.#states.run(group, stream, this.#init(group, stream), async (p, config) => {
        const archived = p.releaseOwner(memberId, limitsOf(config));
        await this.#deadLetter(config, group, stream, archived);
        return { result: undefined, changed: true };
      });
    }
  }

  /** The stored batches holding `acquired` (ascending), each batch once. */
  async #batches(stream: string, acquired: readonly Acquired[], bytes: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let covered = -1; // every offset up to here is in a batch already taken
    for (const [first, last] of runsOf(acquired.map((a) => a.offset))) {
      let seq = Math.max(first, covered + 1);
      while (seq <= last) {
        const r = await this.#shards.read({ name: stream, seq, count: last - seq + 1, bytes, format: 'kafka' });
        let pos = 0;
        while (pos + 12 <= r.body.length) {
          const size = 12 + r.body.readInt32BE(pos + 8);
          const base = Number(r.body.readBigInt64BE(pos));
          const lastOffset = pos + 27 <= r.body.length ? base + r.body.readInt32BE(pos + 23) : base;
          if (lastOffset > covered) {
            parts.push(r.body.subarray(pos, pos + size));
            covered = lastOffset;
          }
          pos += size;
        }
        if (r.nextSeq <= seq || r.body.length === 0) break;
        seq = Math.max(r.nextSeq, covered + 1);
      }
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

/** Runs of consecutive offsets with one delivery count (AcquiredRecords). */
function rangesOf(acquired: readonly Acquired[]): AcquiredSet['ranges'] {
  const out: AcquiredSet['ranges'] = [];
  for (const a of acquired) {
    const last = out[out.length - 1];
    if (last !== undefined && last.lastOffset === a.offset - 1 && last.deliveryCount === a.deliveryCount) last.lastOffset = a.offset;
    else out.push({ firstOffset: a.offset, lastOffset: a.offset, deliveryCount: a.deliveryCount });
  }
  return out;
}
