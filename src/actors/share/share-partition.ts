/**
 * One share partition (KIP-932): the state a share group keeps for one stream (a Kafka partition)
 * — which records are available, acquired under a lock, acknowledged or archived, how often each
 * was delivered — as a pure state machine. Time is passed in (`now`, ms since the epoch); nothing
 * here reads a clock, a store or the stream.
 *
 *   start                                   end
 *     │ tracked records (one entry per record;  │ every record from here on is available,
 *     │ a gap is an offset with no record)      │ never delivered (delivery count 0)
 *     ▼                                         ▼
 *   ──┼──────────────────────────────────────────┼──────────────▶ offsets (stream seqs)
 *
 * - Acquire: available tracked records first (redeliveries, oldest first), then new ones past
 *   `end` (the caller reads them from the stream and hands in the offsets it found). Acquiring
 *   adds one to the delivery count and locks the record to one owner (a Kafka member, an HTTP
 *   lease) until `lockUntil`.
 * - Acknowledge, by its owner while it holds the lock: ACCEPT → acknowledged; RELEASE →
 *   available again; REJECT → archived (never delivered again).
 * - A lock that expires, or a release, of a record delivered `deliveryLimit` times archives it
 *   instead of making it available (KIP-932's `group.share.delivery.count.limit`).
 * - `start` moves past every acknowledged or archived record at its front; those entries go.
 *
 * `toRecord` / `fromRecord` give the compact durable form (runs of equal entries), written by the
 * store before an acknowledgement is answered (share-states.ts), with the partition's running
 * totals (deliveries, redeliveries, acknowledgements, archived records) that the admin API shows:
 * the entries behind `start` are gone, so what happened to them is kept only as these counts.
 */

export type ShareRecordState = 'available' | 'acquired' | 'acknowledged' | 'archived';
export type AckType = 'accept' | 'release' | 'reject';

interface Entry {
  state: ShareRecordState;
  /** Times the record was acquired. */
  deliveryCount: number;
  /** Lock deadline (ms since the epoch) while acquired, else 0. */
  lockUntil: number;
  /** Who holds the lock while acquired, else ''. */
  owner: string;
}

/** A record handed to a consumer. */
export interface Acquired {
  offset: number;
  deliveryCount: number;
}

/** Why an acknowledgement of one offset was refused. */
export type AckRefusal = 'not_acquired' | 'not_owner' | 'lock_expired';

export interface AckResult {
  /** Offsets whose acknowledgement was applied. */
  applied: number[];
  /** Offsets refused, and why. */
  refused: Array<{ offset: number; reason: AckRefusal }>;
  /** Records archived by this call (rejected, or released or expired past the delivery limit): dead-letter candidates. */
  archived: Acquired[];
}

/** Running totals of a partition since it was first used (or since its group was deleted). */
export interface ShareTotals {
  /** Acquisitions: every delivery of a record to a member or lease. */
  delivered: number;
  /** Acquisitions of a record delivered before (delivery count 2 or more). */
  redelivered: number;
  /** Records accepted. */
  acknowledged: number;
  /** Records archived: rejected, or released or expired at the delivery limit. */
  archived: number;
}

/**
 * The durable form: `[first, last, state, deliveryCount, lockUntil, owner]` per run of equal
 * entries; `totals` as [delivered, redelivered, acknowledged, archived] (absent in records
 * written before it existed: counted from zero).
 */
export interface SharePartitionRecord {
  v: 1;
  start: number;
  end: number;
  runs: Array<[number, number, ShareRecordState, number, number, string]>;
  totals?: [number, number, number, number];
}

export interface SharePartitionLimits {
  /** Deliveries after which a record released or whose lock expired is archived (Kafka default 5). */
  deliveryLimit: number;
  /** Most records acquired at once (Kafka's `group.share.partition.max.record.locks`, default 2000). */
  maxLocks: number;
}

export class SharePartition {
  #start: number;
  #end: number;
  readonly #entries = new Map<number, Entry>();
  #acquired = 0;
  readonly #totals: ShareTotals = { delivered: 0, redelivered: 0, acknowledged: 0, archived: 0 };

  /** A partition whose first record to deliver is `start`. */
  constructor(start: number) {
    this.#start = start;
    this.#end = start;
  }

  get start(): number {
    return this.#start;
  }

  get end(): number {
    return this.#end;
  }

  /** Records acquired now (locks held). */
  get acquiredCount(): number {
    return this.#acquired;
  }

  /** The entry of `offset`: tracked, or implied (past `end`: available, never delivered; below `start`: done). */
  stateOf(offset: number): { state: ShareRecordState | 'done'; deliveryCount: number; owner: string; lockUntil: number } {
    if (offset < this.#start) return { state: 'done', deliveryCount: 0, owner: '', lockUntil: 0 };
    if (offset >= this.#end) return { state: 'available', deliveryCount: 0, owner: '', lockUntil: 0 };
    const e = this.#entries.get(offset);
    if (e === undefined) return { state: 'done', deliveryCount: 0, owner: '', lockUntil: 0 };
    return { ...e };
  }

  /** Running totals (a copy). */
  totals(): ShareTotals {
    return { ...this.#totals };
  }

  /** Records whose lock ended before `now` and is not given up yet (that happens at the partition's next call). */
  locksEnded(now: number): number {
    if (this.#acquired === 0) return 0;
    let n = 0;
    for (const e of this.#entries.values()) if (e.state === 'acquired' && e.lockUntil <= now) n++;
    return n;
  }

  /** Counts of tracked entries by state. */
  counts(): Record<ShareRecordState, number> {
    const c = { available: 0, acquired: 0, acknowledged: 0, archived: 0 };
    for (const e of this.#entries.values()) c[e.state]++;
    return c;
  }

  /**
   * Locks held past `now` are given up: each such record becomes available, or archived once it
   * was delivered `limits.deliveryLimit` times. Returns the archived records.
   */
  expire(now: number, limits: SharePartitionLimits): Acquired[] {
    const archived: Acquired[] = [];
    if (this.#acquired === 0) return archived;
    for (const [offset, e] of this.#entries) {
      if (e.state !== 'acquired' || e.lockUntil > now) continue;
      if (this.#giveBack(e, limits)) archived.push({ offset, deliveryCount: e.deliveryCount });
    }
    this.#advance();
    return archived;
  }

  /** True while a tracked record is available (a redelivery waits). */
  hasAvailable(): boolean {
    for (const e of this.#entries.values()) if (e.state === 'available') return true;
    return false;
  }

  /** How many more records may be acquired now. */
  room(limits: SharePartitionLimits): number {
    return Math.max(0, limits.maxLocks - this.#acquired);
  }

  /** Acquire up to `max` available tracked records (oldest first) for `owner` until `lockUntil`. */
  acquireAvailable(max: number, owner: string, lockUntil: number, limits: SharePartitionLimits): Acquired[] {
    const out: Acquired[] = [];
    const n = Math.min(max, this.room(limits));
    if (n <= 0) return out;
    for (const offset of [...this.#entries.keys()].sort((a, b) => a - b)) {
      const e = this.#entries.get(offset)!;
      if (e.state !== 'available') continue;
      this.#lock(e, owner, lockUntil);
      out.push({ offset, deliveryCount: e.deliveryCount });
      if (out.length >= n) break;
    }
    return out;
  }

  /**
   * Acquire records never delivered: `offsets` are the records found in the stream from `end` on
   * (ascending, each ≥ end), `to` the position after the last one looked at (gaps between are
   * offsets with no record: transaction markers, aborted records). `end` moves to `to`. The
   * caller asks for at most `room(limits)` of them.
   */
  acquireNew(offsets: readonly number[], to: number, owner: string, lockUntil: number): Acquired[] {
    const out: Acquired[] = [];
    for (const offset of offsets) {
      if (offset < this.#end || offset >= to) throw new RangeError(`offset ${offset} is outside [${this.#end}, ${to})`);
      const e: Entry = { state: 'available', deliveryCount: 0, lockUntil: 0, owner: '' };
      this.#entries.set(offset, e);
      this.#lock(e, owner, lockUntil);
      out.push({ offset, deliveryCount: e.deliveryCount });
    }
    if (to > this.#end) this.#end = to;
    this.#advance();
    return out;
  }

  /**
   * Acknowledge `offsets` as `type` on behalf of `owner`. Each must be acquired by `owner` with its
   * lock not expired at `now` (expired locks are given up first: an acknowledgement that comes
   * too late is refused, as the record may already be someone else's).
   */
  acknowledge(owner: string, acks: ReadonlyArray<{ offset: number; type: AckType }>, now: number, limits: SharePartitionLimits): AckResult {
    const res: AckResult = { applied: [], refused: [], archived: [] };
    for (const { offset, type } of acks) {
      const e = offset >= this.#start && offset < this.#end ? this.#entries.get(offset) : undefined;
      if (e === undefined || e.state !== 'acquired') {
        res.refused.push({ offset, reason: 'not_acquired' });
        continue;
      }
      if (e.owner !== owner) {
        res.refused.push({ offset, reason: 'not_owner' });
        continue;
      }
      if (e.lockUntil <= now) {
        if (this.#giveBack(e, limits)) res.archived.push({ offset, deliveryCount: e.deliveryCount });
        res.refused.push({ offset, reason: 'lock_expired' });
        continue;
      }
      this.#acquired--;
      e.lockUntil = 0;
      e.owner = '';
      if (type === 'accept') {
        e.state = 'acknowledged';
        this.#totals.acknowledged++;
      } else if (type === 'reject' || e.deliveryCount >= limits.deliveryLimit) {
        e.state = 'archived';
        this.#totals.archived++;
        res.archived.push({ offset, deliveryCount: e.deliveryCount });
      } else e.state = 'available';
      res.applied.push(offset);
    }
    this.#advance();
    return res;
  }

  /** Give up every lock `owner` holds (a member that left): as a release of each. Returns the archived records. */
  releaseOwner(owner: string, limits: SharePartitionLimits): Acquired[] {
    const archived: Acquired[] = [];
    for (const [offset, e] of this.#entries) {
      if (e.state === 'acquired' && e.owner === owner && this.#giveBack(e, limits)) archived.push({ offset, deliveryCount: e.deliveryCount });
    }
    this.#advance();
    return archived;
  }

  /**
   * The stream's records below `seq` are gone (trimmed, expired): nothing below it can be
   * delivered; the start moves there if it was behind.
   */
  skipTo(seq: number): void {
    if (seq <= this.#start) return;
    for (const [offset, e] of this.#entries) {
      if (offset >= seq) continue;
      if (e.state === 'acquired') this.#acquired--;
      this.#entries.delete(offset);
    }
    this.#start = seq;
    if (this.#end < seq) this.#end = seq;
    this.#advance();
  }

  toRecord(): SharePartitionRecord {
    const runs: SharePartitionRecord['runs'] = [];
    for (const offset of [...this.#entries.keys()].sort((a, b) => a - b)) {
      const e = this.#entries.get(offset)!;
      const last = runs[runs.length - 1];
      if (last !== undefined && last[1] === offset - 1 && last[2] === e.state && last[3] === e.deliveryCount && last[4] === e.lockUntil && last[5] === e.owner) last[1] = offset;
      else runs.push([offset, offset, e.state, e.deliveryCount, e.lockUntil, e.owner]);
    }
    const t = this.#totals;
    return { v: 1, start: this.#start, end: this.#end, runs, totals: [t.delivered, t.redelivered, t.acknowledged, t.archived] };
  }

  static fromRecord(r: SharePartitionRecord): SharePartition {
    const p = new SharePartition(r.start);
    p.#end = r.end;
    for (const [first, last, state, deliveryCount, lockUntil, owner] of r.runs) {
      for (let o = first; o <= last; o++) p.#entries.set(o, { state, deliveryCount, lockUntil, owner });
      if (state === 'acquired') p.#acquired += last - first + 1;
    }
    if (r.totals !== undefined) [p.#totals.delivered, p.#totals.redelivered, p.#totals.acknowledged, p.#totals.archived] = r.totals;
    return p;
  }

  #lock(e: Entry, owner: string, lockUntil: number): void {
    e.state = 'acquired';
    e.deliveryCount++;
    e.lockUntil = lockUntil;
    e.owner = owner;
    this.#acquired++;
    this.#totals.delivered++;
    if (e.deliveryCount > 1) this.#totals.redelivered++;
  }

  /** An acquired record's lock ends without an acknowledgement: available, or archived past the limit (true). */
  #giveBack(e: Entry, limits: SharePartitionLimits): boolean {
    this.#acquired--;
    e.lockUntil = 0;
    e.owner = '';
    e.state = e.deliveryCount >= limits.deliveryLimit ? 'archived' : 'available';
    if (e.state === 'archived') this.#totals.archived++;
    return e.state === 'archived';
  }

  /** Move `start` past the acknowledged and archived records (and gaps) at the front. */
  #advance(): void {
    while (this.#start < this.#end) {
      const e = this.#entries.get(this.#start);
      if (e === undefined) {
        // A gap: jump to the next tracked record (or to `end`), not one offset at a time.
        let next = this.#end;
        for (const o of this.#entries.keys()) if (o < next) next = o;
        this.#start = next;
        continue;
      }
      if (e.state !== 'acknowledged' && e.state !== 'archived') break;
      this.#entries.delete(this.#start);
      this.#start++;
    }
  }
}
