/**
 * The object ledger's key layout in etcd (docs/cluster.md, "Objects mode: where data lives"), under
 * the sibling prefix `<metadata prefix>.objects/` — not under the metadata prefix, which every node
 * watches: ledger keys are read with range reads when needed, never watched.
 *
 *   f/<stream>                               fence "<nodeId>:<epoch>" (compared by value)
 *   m/<stream>                               {meta, startSeq, sealed}
 *   i/<stream>/<epoch:010d>.<counter:012d>   {o, off, len, from, to}: one group's frames of the stream
 *   r/<objectKey>/<stream>                   1: the stream references the object
 *   r/<objectKey>/                           the group object's reference marker: JSON list of the entries
 *                                            (`<stream>/<epoch>.<counter>` under i/) its writer's commit
 *                                            recorded for it; each refers to the object while it exists and
 *                                            points into it (one key for all of a group's streams)
 *   o/<objectKey>                            {bytes, at}
 *   d/<objectKey>                            {at}: destroyed, waiting for deletion
 *   w/<stream>                               the group object key where the stream's writer took its
 *                                            place: groups after it in that writer may hold frames of
 *                                            the stream acknowledged before the ledger recorded them
 *   h/<writer>/<from:012d>                   "<n>": the run of writer `g/<node>/<nodeEpoch>/<worker>/` whose
 *                                            numbers start at `from` recorded every group it acknowledged up to n
 *   k/<writer>                               "<commit>#<txn>": the writer's commit token, the last txn of its
 *                                            commits that landed (ledger.ts, CommitToken)
 *   k/t/<stream>/<epoch:010d>                the same for the stream's tail recovery under that fence epoch,
 *                                            removed when the recovery is done (and with the stream)
 *   k/t/<stream>/<epoch:010d>.plan           the entries that recovery records by txns sent at once, written before
 *                                            them and removed after (recovery-plan.ts)
 *   t/<stream>/<epoch:010d>                  {w, after, end, at}: the tail recovery under the fence of that
 *                                            epoch walked writer w's numbers after..end (end: the marker it
 *                                            stopped at); the old owner reads it to answer its appends in flight
 *   q/<writer><first object>.<txn>           the `records` format (part-records.ts): the parts one txn of the
 *                                            writer recorded, pending until indexed
 *   x/<writer>                               {q, o}: how far the writer's records are indexed (part-records.ts)
 *   u/<stream>/<epoch:010d>.<counter:012d>   a stranded part (EntryValue): recorded by a writer whose fence the
 *                                            stream lost before the writer indexed it (part-records.ts)
 *   format                                   "entries" | "records": the cluster's ledger format (ledger-format.ts)
 *   p/<stream>                               {seq, producers} or {seq, o, bytes}: the stream's idempotent producers
 *                                            as of seq (every batch below it applied), inline or in object o
 *                                            (`r/`/`o/` records hold it while named): a new owner replays
 *                                            only the entries after it (docs/objects.md, "Producer state across a move")
 *
 * `<stream>` is the stream name percent-encoded (encodeURIComponent), so a name holding `/` never
 * makes one stream's `i/` prefix a prefix of another's (`i/a/` against `i/a%2Fb/`). Object keys:
 * group objects `g/<nodeId>/<nodeEpoch>/<worker>/<counter:012d>`, compacted objects
 * `c/<streamId>/<epoch:010d>.<counter:012d>`, producer snapshots too large to go inline
 * `p/<nodeId>/<nodeEpoch>/<worker>/<counter:012d>`.
 */

/** What follows the epoch in a recovery plan's key, telling it from the recovery's commit token beside it. */
export const RECOVERY_PLAN_SUFFIX = '.plan';

/** Who may write a stream's ledger entries: the node that opened it, and the open's epoch. */
export interface Fence {
  nodeId: number;
  epoch: number;
}

/** A fence as stored in `f/<stream>`: a plain string, compared by value. */
export function fenceValue(f: Fence): string {
  return `${f.nodeId}:${f.epoch}`;
}

/** The fence a `f/` value names, or null when it is not one. */
export function parseFence(v: string): Fence | null {
  const m = /^(\d+):(\d+)$/.exec(v);
  return m === null ? null : { nodeId: Number(m[1]), epoch: Number(m[2]) };
}

export const sameFence = (a: Fence, b: Fence): boolean => a.nodeId === b.nodeId && a.epoch === b.epoch;

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** A stream name as it appears in ledger keys. */
export const streamSegment = (stream: string): string => encodeURIComponent(stream);

/** The name of a stream from its key segment. */
export const streamOfSegment = (seg: string): string => decodeURIComponent(seg);

/** The key of a group object: one shard worker's group commits (its `worker` number is its first shard's) on one node start. */
export function groupObjectKey(nodeId: number, nodeEpoch: number, shard: number, counter: number): string {
  return `g/${nodeId}/${nodeEpoch}/${shard}/${pad(counter, 12)}`;
}

/** A group object key's writer (`g/<nodeId>/<nodeEpoch>/<worker>/`) and number, or null for any other key. */
export function parseGroupObjectKey(key: string): { writer: string; n: number } | null {
  const m = /^(g\/\d+\/\d+\/\d+\/)(\d{12,})$/.exec(key);
  return m === null ? null : { writer: m[1]!, n: Number(m[2]) };
}

/** The key of group `n` of a writer (`g/<nodeId>/<nodeEpoch>/<worker>/`). */
export function writerObjectKey(writer: string, n: number): string {
  return `${writer}${pad(n, 12)}`;
}

/**
 * The run an object key belongs to, whose keys sort in the order the objects were made: a group
 * object's writer (`g/<node>/<nodeEpoch>/<worker>/`, numbers of 12 digits or more) or a compacted
 * object's stream (`c/<streamId>/`, zero-padded epoch and counter); null for any other key.
 */
export function objectRun(objectKey: string): string | null {
  const group = parseGroupObjectKey(objectKey);
  if (group !== null) return group.writer;
  const m = /^c\/\d+\//.exec(objectKey);
  return m === null ? null : m[0];
}

/** The key of a compacted object: runs of frames rewritten (compaction), named after one of the streams whose runs it holds (compaction.ts, namesake). */
export function compactedObjectKey(streamId: number, epoch: number, counter: number): string {
  return `c/${streamId}/${pad(epoch, 10)}.${pad(counter, 12)}`;
}

/** The key of a producer snapshot object: one shard's snapshots on one node start are numbered. */
export function producerObjectKey(nodeId: number, nodeEpoch: number, shard: number, counter: number): string {
  return `p/${nodeId}/${nodeEpoch}/${shard}/${pad(counter, 12)}`;
}

/** The ledger's key layout under one metadata prefix. Every key below starts with `root`. */
export class LedgerKeys {
  /** `<metadata prefix>.objects/`. */
  readonly root: string;

  constructor(metadataPrefix: string) {
    this.root = `${metadataPrefix.replace(/\/+$/, '')}.objects/`;
  }

  fence(stream: string): string {
    return `${this.root}f/${streamSegment(stream)}`;
  }

  meta(stream: string): string {
    return `${this.root}m/${streamSegment(stream)}`;
  }

  /** Every entry of a stream: keys under this prefix, in key order = epoch, counter order. */
  entries(stream: string): string {
    return `${this.root}i/${streamSegment(stream)}/`;
  }

  entry(stream: string, epoch: number, counter: number): string {
    return `${this.entries(stream)}${entryName(epoch, counter)}`;
  }

  /** Every reference into an object. */
  refs(objectKey: string): string {
    return `${this.root}r/${objectKey}/`;
  }

  ref(objectKey: string, stream: string): string {
    return `${this.refs(objectKey)}${streamSegment(stream)}`;
  }

  /**
   * `r/<object>/`: a group object's reference marker (the empty segment: no stream name is empty).
   * It sorts before the object's `r/<object>/<stream>` keys, so an older reaper, which finds any
   * key under `r/<object>/`, keeps the object (the marker format needs no flag day).
   */
  referenceMarker(objectKey: string): string {
    return this.refs(objectKey);
  }

  /** An entry as a reference marker names it, relative to `i/`. */
  markedEntry(stream: string, epoch: number, counter: number): string {
    return `${streamSegment(stream)}/${entryName(epoch, counter)}`;
  }

  /** The full key of an entry a reference marker names. */
  entryOfMarker(marked: string): string {
    return `${this.root}i/${marked}`;
  }

  /** `w/<stream>`: where the stream's writer took its place. */
  position(stream: string): string {
    return `${this.root}w/${streamSegment(stream)}`;
  }

  /** `h/<writer>/<from:012d>`: how far the writer's run that starts at `from` is recorded. */
  recorded(writer: string, from: number): string {
    return `${this.recordedRuns(writer)}${pad(from, 12)}`;
  }

  /** `k/<writer>`: the writer's commit token (ledger.ts, CommitToken). */
  commitToken(writer: string): string {
    return `${this.root}k/${writer}`;
  }

  /** `k/t/<stream>/`: the commit tokens of the stream's tail recoveries. */
  recoveryTokens(stream: string): string {
    return `${this.root}k/t/${streamSegment(stream)}/`;
  }

  /** `k/t/<stream>/<epoch:010d>`: the commit token of the stream's tail recovery under the fence of `epoch` (removed once it is done). */
  recoveryToken(stream: string, epoch: number): string {
    return `${this.recoveryTokens(stream)}${pad(epoch, 10)}`;
  }

  /** `k/t/<stream>/<epoch:010d>.plan`: the plan of that recovery's entries (recovery-plan.ts; removed once they are recorded). */
  recoveryPlan(stream: string, epoch: number): string {
    return `${this.recoveryToken(stream, epoch)}${RECOVERY_PLAN_SUFFIX}`;
  }

  /** Every run's `h/` key of a writer (`g/<node>/<nodeEpoch>/<worker>/`). */
  recordedRuns(writer: string): string {
    return `${this.root}h/${writer}`;
  }

  /** Every tail walk recorded for a stream (`t/<stream>/<epoch>`), in epoch order. */
  tailWalks(stream: string): string {
    return `${this.root}t/${streamSegment(stream)}/`;
  }

  tailWalk(stream: string, epoch: number): string {
    return `${this.tailWalks(stream)}${pad(epoch, 10)}`;
  }

  /** `q/<writer>`: the writer's part records (part-records.ts), in the order it wrote them. */
  partRecords(writer: string): string {
    return `${this.root}q/${writer}`;
  }

  /** `q/<writer><name>`: one of the writer's part records. */
  partRecord(writer: string, name: string): string {
    return `${this.partRecords(writer)}${name}`;
  }

  /** `x/<writer>`: how far the writer's part records are indexed. */
  indexCursor(writer: string): string {
    return `${this.root}x/${writer}`;
  }

  /** `u/<stream>/`: the stream's stranded parts, in epoch and counter order. */
  strandedParts(stream: string): string {
    return `${this.root}u/${streamSegment(stream)}/`;
  }

  strandedPart(stream: string, epoch: number, counter: number): string {
    return `${this.strandedParts(stream)}${entryName(epoch, counter)}`;
  }

  /** `p/<stream>`: the stream's newest producer snapshot. */
  producers(stream: string): string {
    return `${this.root}p/${streamSegment(stream)}`;
  }

  object(objectKey: string): string {
    return `${this.root}o/${objectKey}`;
  }

  /** `format`: the cluster's ledger format (`entries` or `records`), written once by its first node in objects mode. */
  get format(): string {
    return `${this.root}format`;
  }

  destroyed(objectKey: string): string {
    return `${this.root}d/${objectKey}`;
  }

  /** Prefixes of whole key families (count-only reads: objectCount, destroyedObjectBacklog). */
  get objects(): string {
    return `${this.root}o/`;
  }

  /** Every object's references (`r/<object>/<stream>`), in object key order. */
  get references(): string {
    return `${this.root}r/`;
  }

  get destroyedObjects(): string {
    return `${this.root}d/`;
  }

  get fences(): string {
    return `${this.root}f/`;
  }

  get metas(): string {
    return `${this.root}m/`;
  }
}

/** `<epoch:010d>.<counter:012d>`: an entry's name within its stream, ordered by epoch then counter. */
export function entryName(epoch: number, counter: number): string {
  return `${pad(epoch, 10)}.${pad(counter, 12)}`;
}

/** Epoch and counter of an entry key (the part after the stream's `i/` prefix), or null. */
export function parseEntryName(name: string): { epoch: number; counter: number } | null {
  const m = /^(\d{10})\.(\d{12})$/.exec(name);
  return m === null ? null : { epoch: Number(m[1]), counter: Number(m[2]) };
}
