/**
 * Offline check and repair of a stopped node's data directory (`svc check`, `svc repair`;
 * docs/storage.md). Like `kafka-dump-log` and `etcdutl`, they read the files directly:
 *
 *   <dataDir>/shards/<k>/log/*.seg  ── every frame's length, type and CRC-32C (log-scan.ts)
 *   <dataDir>/shards/<k>/index/     ── opens (RocksDB), and every segment it refers to exists
 *
 * Repair keeps every valid frame where it is: a damaged range is copied into a side file under
 * `<dataDir>/shards/<k>/quarantine/` and overwritten with a PAD frame of the same size, so every
 * position the index holds stays true; a torn tail of the newest segment is cut (as the node
 * would); an index that cannot be opened or refers to missing segments is moved into the
 * quarantine folder, and the shard rebuilds it from its segments on the next start. Before it
 * goes, the index's stream states are written as a `seqFloor` CATALOG frame at the log's end, so
 * the rebuilt tails stay at the seqs already handed out (keepSeqFloors). Reports name the stream
 * and seqs a damaged frame or a missing segment held (damaged-frame.ts). Both take the data
 * directory's lock before reading anything (data-dir-lock.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lockDataDir } from './data-dir-lock';
import { type HeaderHint, type IndexedChunk, describeHeld, headerHint } from './damaged-frame';
import { type CarriedStream, decodeCatalog, encodeSeqFloorFrames } from './worker/catalog-carry';
import { CHECKPOINT_KEY, CHUNK_PREFIX, STREAM_PREFIX, decodeCheckpoint, decodeChunk, decodeStream } from './worker/catalog-codec';
import { FRAME_HEADER, type Frame, encodeFrame, FrameType } from './worker/frame';
import { type KvStore } from './worker/kv-store';
import { type Damage, scanFrames } from './worker/log-scan';
import { fsyncPath, segmentFileName } from './worker/segment-log';
import { type StoredMeta } from './worker/stream-meta';
import { pendingJournalRecords, replayJournals } from './worker/sync-journal';

/** One finding of a check, in the words a report prints. */
export interface Finding {
  shard: number;
  /** The file or directory concerned. */
  file: string;
  /** `damage`: acknowledged data is unreadable or the node refuses to start; `torn`: a torn tail the node cuts itself. */
  kind: 'damage' | 'torn' | 'missing' | 'index';
  message: string;
  /** For damaged frames: the byte range. */
  range?: { pos: number; end: number };
}

export interface CheckReport {
  shards: number;
  segments: number;
  frames: number;
  findings: Finding[];
  /** Findings that need `svc repair` (or a backup): everything but torn tails. */
  damaged: boolean;
  /**
   * Groups acknowledged through a worker's sync journal whose bytes are not in their segment
   * files (a power cut lost the unsynced tail; the next start or `svc repair` writes them back
   * first): a torn or short tail listed may be theirs. 0 after a clean stop or a crash.
   */
  journaled: number;
}

const SEG = /^(\d{10})\.seg$/;

/** Only whether the files exist, before the lock (which would create the directory and its lock file). */
function assertDataDir(dataDir: string): void {
  if (!fs.existsSync(path.join(dataDir, 'svc-node.json')) || !fs.existsSync(path.join(dataDir, 'shards'))) throw new Error(`${dataDir} is not a node's data directory (no svc-node.json and shards/)`);
}

function shardIds(dataDir: string): number[] {
  const dir = path.join(dataDir, 'shards');
  assertDataDir(dataDir);
  return fs
    .readdirSync(dir)
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .sort((a, b) => a - b);
}

function segmentsOf(logDir: string): number[] {
  if (!fs.existsSync(logDir)) return [];
  return fs
    .readdirSync(logDir)
    .map((f) => SEG.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

interface ShardScan {
  findings: Finding[];
  frames: number;
  segments: number;
  /** Damage per segment file, for repair. */
  damage: Array<{ file: string; newest: boolean; ranges: Array<Damage & { held: string }> }>;
  /** The index must be rebuilt (unopenable, or refers to what is gone). */
  rebuildIndex: boolean;
  /**
   * Each stream's state as the index has it, its next seq lifted to the end of its last indexed
   * chunk: the seqs it acknowledged, which a rebuild from the segments alone must not hand out
   * again. Null when the index could not be read.
   */
  marks: CarriedStream[] | null;
  /** The index's next stream id (0 when unknown). */
  nextStreamId: number;
}

async function scanShard(dataDir: string, shard: number): Promise<ShardScan> {
  const base = path.join(dataDir, 'shards', String(shard));
  const logDir = path.join(base, 'log');
  const segs = segmentsOf(logDir);
  const out: ShardScan = { findings: [], frames: 0, segments: segs.length, damage: [], rebuildIndex: false, marks: null, nextStreamId: 0 };
  const sizes = new Map<number, number>();
  /** Stream names from CREATE and CATALOG frames, then from the index's catalog. */
  const names = new Map<number, string>();
  const found: Array<{ segId: number; file: string; newest: boolean; d: Damage; hint: HeaderHint | null }> = [];
  segs.forEach((segId, i) => {
    const file = path.join(logDir, segmentFileName(segId));
    const buf = fs.readFileSync(file);
    sizes.set(segId, buf.length);
    const scan = scanFrames(buf, (f) => learnNames(f, names), false);
    out.frames += scan.frames;
    for (const d of scan.damage) found.push({ segId, file, newest: i === segs.length - 1, d, hint: headerHint(buf, d.pos) });
  });
  const index = await readIndex(path.join(base, 'index'), logDir, sizes, shard, out);
  if (index !== null) for (const [id, n] of index.names) names.set(id, n);
  const chunks = index?.chunks ?? null;
  const bySeg = new Map<string, ShardScan['damage'][number]>();
  for (const { segId, file, newest, d, hint } of found) {
    const held = describeHeld(hint, segId, d.pos, d.end, names, chunks);
    const tornTail = newest && d.torn;
    let seg = bySeg.get(file);
    if (seg === undefined) {
      seg = { file, newest, ranges: [] };
      bySeg.set(file, seg);
      out.damage.push(seg);
    }
    seg.ranges.push({ ...d, held });
    out.findings.push({
      shard,
      file,
      kind: tornTail ? 'torn' : 'damage',
      range: { pos: d.pos, end: d.end },
      message: tornTail
        ? `torn tail: bytes ${d.pos}..${d.end} (${d.reason}) hold no valid frame; the node cuts them on start (an interrupted, unacknowledged write)`
        : `damaged frame at bytes ${d.pos}..${d.end} (${d.reason})${d.torn ? '' : '; valid frames follow'}; ${held}`,
    });
  }
  return out;
}

/** Names from the frames that carry them: CREATE (the stream's meta) and CATALOG (carried streams' meta). */
function learnNames(f: Frame, names: Map<number, string>): void {
  try {
    if (f.type === FrameType.Create) names.set(f.streamId, (JSON.parse(f.payload.toString()) as StoredMeta).name);
    else if (f.type === FrameType.Catalog) for (const c of decodeCatalog(f.payload).streams) names.set(c.id, c.meta.name);
  } catch {
    // A frame whose CRC holds but whose JSON does not parse names nothing; recovery reports it.
  }
}

/**
 * Open the shard's index: check that every segment it refers to exists and is long enough (into
 * `out`), and read what the reports and repair need from it. Null when there is none or it cannot
 * be opened (a finding says why).
 */
async function readIndex(indexDir: string, logDir: string, sizes: ReadonlyMap<number, number>, shard: number, out: ShardScan): Promise<{ names: Map<number, string>; chunks: IndexedChunk[] } | null> {
  if (!fs.existsSync(indexDir)) return null;
  let store: KvStore;
  try {
    // Loaded only here: `svc serve`'s main thread never loads RocksDB (its workers do).
    const { openRocksStore } = await import('./worker/rocks-store');
    store = await openRocksStore(indexDir);
  } catch (err) {
    out.findings.push({ shard, file: indexDir, kind: 'index', message: (err as Error).message });
    out.rebuildIndex = !/lock/i.test((err as Error).message);
    return null;
  }
  try {
    const referenced = new Set<number>();
    const cpEntry = store.scan(CHECKPOINT_KEY)[0];
    const cp = cpEntry === undefined ? null : decodeCheckpoint(cpEntry[1]);
    if (cp !== null && cp.pos > 0) referenced.add(cp.segId);
    const names = new Map<number, string>();
    const marks = new Map<number, CarriedStream>();
    for (const [k, v] of store.scan(STREAM_PREFIX)) {
      const d = decodeStream(k, v);
      names.set(d.id, d.meta.name);
      const c: CarriedStream = { id: d.id, meta: d.meta, startSeq: d.startSeq, nextSeq: d.nextSeq, closed: d.closed, lastTs: d.lastTs };
      if (d.producers !== undefined) c.producers = d.producers;
      marks.set(d.id, c);
    }
    const chunks: IndexedChunk[] = [];
    for (const [k, v] of store.scan(CHUNK_PREFIX)) {
      const { streamId, chunk } = decodeChunk(k, v);
      referenced.add(chunk.segId);
      chunks.push({ streamId, segId: chunk.segId, pos: chunk.pos, len: chunk.len, baseSeq: chunk.baseSeq, lastSeq: chunk.lastSeq });
      // Appends do not rewrite the catalog entry (stream-writes.ts): the chunks may end past its next seq.
      const m = marks.get(streamId);
      if (m !== undefined && chunk.lastSeq + 1 > m.nextSeq) m.nextSeq = chunk.lastSeq + 1;
    }
    out.marks = [...marks.values()];
    out.nextStreamId = Math.max(cp?.nextStreamId ?? 0, ...[...marks.keys()].map((id) => id + 1));
    for (const segId of [...referenced].sort((a, b) => a - b)) {
      if (sizes.has(segId)) continue;
      out.findings.push({ shard, file: path.join(logDir, segmentFileName(segId)), kind: 'missing', message: `missing, but the index refers to it${lostIn(chunks, segId, names)}` });
      out.rebuildIndex = true;
    }
    const cpSize = cp === null ? undefined : sizes.get(cp.segId);
    if (cp !== null && cpSize !== undefined && cpSize < cp.pos) {
      out.findings.push({ shard, file: path.join(logDir, segmentFileName(cp.segId)), kind: 'missing', message: `${cpSize} bytes, but the index says ${cp.pos} bytes of it were synced (cut outside the node)` });
      out.rebuildIndex = true;
    }
    return { names, chunks };
  } finally {
    await store.close();
  }
}

/** `: it held stream /a seqs 376..399, …` for a missing segment, from the index's chunks in it. */
function lostIn(chunks: readonly IndexedChunk[], segId: number, names: ReadonlyMap<number, string>): string {
  const streams = new Map<number, { first: number; last: number }>();
  for (const c of chunks) {
    if (c.segId !== segId) continue;
    const r = streams.get(c.streamId);
    streams.set(c.streamId, r === undefined ? { first: c.baseSeq, last: c.lastSeq } : { first: Math.min(r.first, c.baseSeq), last: Math.max(r.last, c.lastSeq) });
  }
  if (streams.size === 0) return '';
  return `; the index puts ${[...streams].map(([id, r]) => `stream ${names.get(id) ?? `id ${id}`} seqs ${r.first}..${r.last}`).join(', ')} in it`;
}

/** `svc check`: verify every segment and index of a stopped node. */
export async function checkDataDir(dataDir: string): Promise<CheckReport> {
  assertDataDir(dataDir); // not a data directory: say so before creating a lock file in it
  // Before reading anything: a running node's files change under a check, and opening its indexes would rename their RocksDB logs.
  const lock = lockDataDir(dataDir, 'check');
  try {
    return await checkLocked(dataDir);
  } finally {
    lock.release();
  }
}

async function checkLocked(dataDir: string): Promise<CheckReport> {
  const report: CheckReport = { shards: 0, segments: 0, frames: 0, findings: [], damaged: false, journaled: pendingJournalRecords(dataDir) };
  for (const shard of shardIds(dataDir)) {
    const s = await scanShard(dataDir, shard);
    refuseLocked(s, dataDir);
    report.shards++;
    report.segments += s.segments;
    report.frames += s.frames;
    report.findings.push(...s.findings);
  }
  report.damaged = report.findings.some((f) => f.kind !== 'torn');
  return report;
}

export interface RepairAction {
  shard: number;
  file: string;
  action: string;
}

/** `svc repair`: quarantine damaged frames and unusable indexes so that the node starts again, keeping every valid frame. */
export async function repairDataDir(dataDir: string): Promise<{ actions: RepairAction[]; unrepaired: Finding[] }> {
  assertDataDir(dataDir);
  const lock = lockDataDir(dataDir, 'repair');
  try {
    return await repairLocked(dataDir);
  } finally {
    lock.release();
  }
}

async function repairLocked(dataDir: string): Promise<{ actions: RepairAction[]; unrepaired: Finding[] }> {
  const actions: RepairAction[] = [];
  const unrepaired: Finding[] = [];
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const scans = new Map<number, ShardScan>();
  for (const shard of shardIds(dataDir)) {
    const s = await scanShard(dataDir, shard);
    refuseLocked(s, dataDir);
    scans.set(shard, s);
  }
  // Groups acknowledged through a worker's sync journal only go back into their logs first, as a
  // start does: repair must see them (a tail it would cut may be theirs), and a journal replayed
  // after a repair would write old bytes over what the repair changed.
  if (replayJournals(dataDir) > 0) for (const shard of scans.keys()) scans.set(shard, await scanShard(dataDir, shard));
  for (const [shard, s] of scans) {
    const quarantine = path.join(dataDir, 'shards', String(shard), 'quarantine');
    for (const seg of s.damage) {
      const fd = fs.openSync(seg.file, 'r+');
      try {
        for (const d of seg.ranges) {
          const bytes = Buffer.alloc(d.end - d.pos);
          fs.readSync(fd, bytes, 0, bytes.length, d.pos);
          fs.mkdirSync(quarantine, { recursive: true });
          const side = path.join(quarantine, `${path.basename(seg.file)}.${d.pos}-${d.end}.bad`);
          fs.writeFileSync(side, bytes);
          fsyncPath(side);
          if (d.torn && (seg.newest || bytes.length < FRAME_HEADER)) {
            // Nothing valid follows: cut, as the node cuts a torn tail.
            fs.ftruncateSync(fd, d.pos);
            actions.push({ shard, file: seg.file, action: `cut at byte ${d.pos} (${bytes.length} bytes of torn tail saved in ${side})` });
          } else if (bytes.length >= FRAME_HEADER) {
            fs.writeSync(fd, encodeFrame(FrameType.Pad, 0, Buffer.alloc(bytes.length - FRAME_HEADER)), 0, bytes.length, d.pos);
            actions.push({ shard, file: seg.file, action: `bytes ${d.pos}..${d.end} (${d.reason}) quarantined in ${side} and replaced by padding (${d.held}); the records they held are lost, readers skip their seqs` });
          } else {
            unrepaired.push({ shard, file: seg.file, kind: 'damage', range: { pos: d.pos, end: d.end }, message: `damaged bytes ${d.pos}..${d.end} are too few to pad (${bytes.length}); restore the file from a backup` });
          }
        }
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    if (s.rebuildIndex) {
      if (s.marks !== null && s.marks.length > 0) actions.push(keepSeqFloors(dataDir, shard, s.marks, s.nextStreamId));
      const indexDir = path.join(dataDir, 'shards', String(shard), 'index');
      fs.mkdirSync(quarantine, { recursive: true });
      const aside = path.join(quarantine, `index-${stamp}`);
      fs.renameSync(indexDir, aside);
      actions.push({ shard, file: indexDir, action: `moved to ${aside}; the shard rebuilds its index from its segments on the next start` });
    }
    for (const f of s.findings) if (f.kind === 'index' && !s.rebuildIndex) unrepaired.push(f);
  }
  return { actions, unrepaired };
}

/**
 * Before the index goes: its streams' states, with the next seq each has handed out, as one
 * CATALOG frame at the end of the shard's newest segment (catalog-carry.ts, `seqFloor`). The
 * rebuild from the segments then ends each stream's tail there, not at the last record that
 * survived: a seq acknowledged in a lost segment is never handed to another record (the lost
 * ones are a gap readers skip, docs/storage.md).
 */
function keepSeqFloors(dataDir: string, shard: number, marks: CarriedStream[], nextStreamId: number): RepairAction {
  const logDir = path.join(dataDir, 'shards', String(shard), 'log');
  const segs = segmentsOf(logDir);
  fs.mkdirSync(logDir, { recursive: true });
  const file = path.join(logDir, segmentFileName(segs.length === 0 ? 0 : segs[segs.length - 1]!));
  const frames = encodeSeqFloorFrames(marks, nextStreamId);
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT);
  try {
    let at = fs.fstatSync(fd).size;
    for (const f of frames) {
      fs.writeSync(fd, f, 0, f.length, at);
      at += f.length;
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fsyncPath(logDir);
  return { shard, file, action: `kept the next seq of ${marks.length} stream(s) as the index had it (a CATALOG frame at the end): new appends get seqs above every seq the index knew acknowledged, and seqs lost with a segment stay a gap` };
}

/** A locked index means a node (or another check) has the directory open: its files are changing under us. */
function refuseLocked(s: ShardScan, dataDir: string): void {
  const locked = s.findings.find((f) => f.kind === 'index' && /lock/i.test(f.message));
  if (locked !== undefined) throw new Error(`${locked.file} is locked: stop the node using ${dataDir} first`);
}
