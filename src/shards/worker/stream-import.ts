/**
 * Opening a stream from frames another node wrote (docs/storage.md, "Imported streams"; the
 * objects-mode design: a stream moved to this node is read back from the object store).
 *
 *   begin ──▶ staging stream: new local id, CREATE frame with `importing: true`, no name
 *   frames ─▶ each chunk checked whole (CRC of every frame, batch header, seq order), then its
 *             DATA batches written as they are (base offset = seq), TRIM/SEAL frames noted;
 *             answered once durable, so the sender's pace is the disk's
 *   end ────▶ DELETE of the local copy, TRIM to the start, SEAL, CONFIG `{importing: false}`:
 *             one group, applied at once, so readers see the old copy until it is durable and
 *             then the whole imported stream
 *
 * Every frame written here is `local` (GroupCommit.enqueue): the data is already recorded where
 * it came from. A failure (a damaged frame, a gap in the seqs, an abort) deletes the staging
 * stream and leaves the local copy as it was; a restart abandons an import it finds unpublished
 * (shard.ts), whose caller never got an answer and imports again.
 *
 * The imported meta is the source's `m/` record (written in the same transactions as the entries
 * it comes with), so CREATE and CONFIG frames in the input are checked but not applied. The frames'
 * stream ids are the writer's and are ignored.
 */
import { SvcError } from '../../errors';
import { type BatchHeader, readBatchHeader } from '../../util/record-batch';
import { type AdoptParams, type ImportBeginParams, type ImportFramesResult, type ImportedMeta, type OpenedLedger } from '../types';
import { FRAME_HEADER, FrameType, LAST_TYPE, frameProblem } from './frame';
import { decodeStoredProducers } from './producer-snapshot';
import { type SealProducer } from './producers';
import { RemoteChunks } from './remote-chunks';
import { type StreamCatalog } from './stream-catalog';
import { type StoredMeta, readMeta } from './stream-meta';
import { type StreamLedgerState, type StreamState } from './stream-state';
import { type StreamWrites } from './stream-writes';

interface Import {
  s: StreamState;
  /** The start: the imported meta's, raised by TRIM frames. */
  startSeq: number;
  sealed: boolean;
  /** The producer of the last SEAL frame that named one. */
  sealProducer: SealProducer | null;
  /** A DATA frame was taken: later ones must follow it seq for seq. */
  hasData: boolean;
  /** The seq the next DATA frame starts at (once `hasData`). */
  next: number;
  frames: number;
  dataFrames: number;
}

/** One checked frame of a chunk, ready to write. */
type Step = { kind: 'data'; batch: Buffer; h: BatchHeader } | { kind: 'skip' };

export class StreamImports {
  readonly #streams: StreamCatalog;
  readonly #writes: StreamWrites;
  readonly #byId = new Map<number, Import>();

  constructor(streams: StreamCatalog, writes: StreamWrites) {
    this.#streams = streams;
    this.#writes = writes;
  }

  /** Start an import: a hidden staging stream (an earlier import of the name still open is abandoned). */
  begin(p: ImportBeginParams): number {
    const m = p.meta;
    const stored = checkImportedMeta(p.name, m);
    this.abandonName(p.name);
    const s = this.#writes.create({ ...readMeta(stored), importing: true }, true);
    if (p.epoch !== undefined) s.openedEpoch = p.epoch;
    if (p.ledger !== undefined) s.ledger = openedLedger(p.ledger, m);
    this.#byId.set(s.id, { s, startSeq: m.startSeq, sealed: m.sealed, sealProducer: null, hasData: false, next: s.assignedSeq, frames: 0, dataFrames: 0 });
    return s.id;
  }

  /**
   * Take one chunk of whole frames: every frame is checked before any is written, so a bad one
   * fails the import (`data_corrupt`) with nothing of its chunk written; the import is abandoned.
   */
  frames(name: string, importId: number, chunk: Buffer): ImportFramesResult {
    const im = this.#open(name, importId);
    let steps: Step[];
    try {
      steps = this.#check(im, chunk);
    } catch (err) {
      this.#abandon(im);
      throw err;
    }
    for (const st of steps) {
      if (st.kind !== 'data') continue;
      this.#writes.importBatch(im.s, st.batch, st.h);
      im.dataFrames++;
    }
    im.frames += steps.length;
    return { frames: im.frames, nextSeq: im.s.assignedSeq };
  }

  /** Publish: the local copy (if any) goes, the imported stream takes the name; all in one group. */
  end(name: string, importId: number): { s: StreamState; replaced: boolean; frames: number; dataFrames: number } {
    const im = this.#open(name, importId);
    this.#byId.delete(importId);
    const { s } = im;
    // First in the group, so the log (and replay) has the old copy's DELETE before the publish.
    const old = this.#streams.byName.get(name);
    const replaced = old !== undefined && !old.deleted;
    if (replaced) this.#writes.delete(old, true);
    if (im.startSeq > s.startSeq) this.#writes.trim(s, im.startSeq, true);
    if (im.sealed) this.#writes.seal(s, im.sealProducer, true);
    this.#writes.publish(s);
    return { s, replaced, frames: im.frames, dataFrames: im.dataFrames };
  }

  /**
   * Open a stream from the object ledger without its frames (docs/objects.md, "Opening without a
   * copy"): a stream whose local log starts, and whose tail is, at the ledger's remote end, with
   * the entries below it as remote chunks (memory only) and the producers given. Written like an
   * import's end, in one group of `local` frames: CREATE (hidden), the old copy's DELETE, TRIM to
   * the remote end (so that replay, which knows no remote chunks, finds the tail there), SEAL,
   * publish. A restart replays a stream starting at the remote end; the open that follows adopts
   * it again from the ledger. Forks are refused (a fork's records below its fork point are its
   * source's: not built for remote chunks).
   */
  adopt(p: AdoptParams): { s: StreamState; replaced: boolean; chunks: RemoteChunks; kept?: true } {
    // A copy opened here at this epoch already (the opener tried again after a later step of its
    // open failed) may have taken appends since: it is kept, never replaced by entries read before
    // them. One opened at a later epoch makes this adopt stale.
    const here = this.#streams.byName.get(p.name);
    if (here !== undefined && !here.deleted && here.openedEpoch !== undefined && p.epoch !== undefined && here.openedEpoch >= p.epoch) {
      if (here.openedEpoch > p.epoch) throw new SvcError('conflict', `stream ${p.name}: the copy here was opened at epoch ${here.openedEpoch}; an adopt at epoch ${p.epoch} is stale`);
      return { s: here, replaced: false, chunks: here.remote?.chunks ?? new RemoteChunks(p.name, [], here.startSeq), kept: true };
    }
    const stored = checkImportedMeta(p.name, p.meta);
    if (stored.fork !== undefined && stored.fork !== null) throw badImport(`stream ${p.name} is a fork: a fork is not adopted from the object store (import it)`);
    if (!Array.isArray(p.entries)) throw badImport('the entries are missing');
    const chunks = new RemoteChunks(p.name, p.entries, p.meta.startSeq);
    const producers = decodeStoredProducers(p.producers ?? [], `adopt of stream ${p.name}`);
    const remoteEnd = Math.max(chunks.end, p.meta.startSeq);
    this.abandonName(p.name);
    const s = this.#writes.create({ ...readMeta(stored), importing: true }, true);
    if (p.epoch !== undefined) s.openedEpoch = p.epoch;
    if (p.ledger !== undefined) s.ledger = openedLedger(p.ledger, p.meta);
    const old = this.#streams.byName.get(p.name);
    const replaced = old !== undefined && !old.deleted;
    if (replaced) this.#writes.delete(old, true);
    if (remoteEnd > s.startSeq) this.#writes.trim(s, remoteEnd, true);
    s.durableProducers = producers;
    s.remote = { chunks, startSeq: p.meta.startSeq };
    if (p.meta.sealed) this.#writes.seal(s, null, true);
    this.#writes.publish(s);
    return { s, replaced, chunks };
  }

  /** Stop an import (its sender failed): its staging stream goes. False when none was open. */
  abort(name: string, importId: number): boolean {
    const im = this.#byId.get(importId);
    if (im === undefined || im.s.meta.name !== name) return false;
    this.#abandon(im);
    return true;
  }

  /** Abandon every open import of `name` (a new import of it, or a drop: those `which` names). */
  abandonName(name: string, which: (s: StreamState) => boolean = () => true): void {
    for (const im of [...this.#byId.values()]) if (im.s.meta.name === name && which(im.s)) this.#abandon(im);
  }

  #open(name: string, importId: number): Import {
    const im = this.#byId.get(importId);
    if (im === undefined || im.s.meta.name !== name) {
      throw new SvcError('conflict', `no import ${importId} of stream ${name} is open here (it failed, was aborted or superseded, or the shard restarted)`);
    }
    return im;
  }

  #abandon(im: Import): void {
    this.#byId.delete(im.s.id);
    if (!im.s.deleted) this.#writes.delete(im.s, true);
  }

  /** Check a chunk's frames (see `frames`); updates the import's start, seal and seq position. */
  #check(im: Import, chunk: Buffer): Step[] {
    const steps: Step[] = [];
    let next = im.next;
    let hasData = im.hasData;
    let startSeq = im.startSeq;
    let sealed = im.sealed;
    let sealProducer = im.sealProducer;
    for (let pos = 0; pos < chunk.length; ) {
      const problem = frameProblem(chunk, pos);
      if (problem !== null) throw corrupt(im, pos, problem);
      const size = 8 + chunk.readUInt32BE(pos);
      const type = chunk[pos + 8]! as FrameType;
      const payload = chunk.subarray(pos + FRAME_HEADER, pos + size);
      switch (type) {
        case FrameType.Data: {
          let h: BatchHeader;
          try {
            h = readBatchHeader(payload, 0);
          } catch (err) {
            throw corrupt(im, pos, (err as Error).message);
          }
          if (h.magic !== 2 || h.lastOffsetDelta < 0 || h.batchLength + 12 !== payload.length || !Number.isSafeInteger(h.baseOffset) || h.baseOffset < 0) {
            throw corrupt(im, pos, 'not a whole RecordBatch v2');
          }
          const last = h.baseOffset + h.lastOffsetDelta;
          if (last < next) {
            // Already taken (the same range twice): nothing to keep.
            steps.push({ kind: 'skip' });
            break;
          }
          // Batches follow seq for seq; the first may begin below the start (its records there
          // are dead) but not above it: the records between would be missing.
          const gap = hasData ? h.baseOffset !== next : h.baseOffset < next || h.baseOffset > Math.max(next, startSeq);
          if (gap) throw corrupt(im, pos, `a batch of seqs ${h.baseOffset}..${last} where seq ${hasData ? next : Math.max(next, startSeq)} was expected (records are missing or out of order)`);
          if (last < startSeq) {
            // Wholly below the start (trimmed where it came from): dead, not written.
            if (hasData) next = last + 1;
            steps.push({ kind: 'skip' });
            break;
          }
          hasData = true;
          next = last + 1;
          steps.push({ kind: 'data', batch: payload, h });
          break;
        }
        case FrameType.Trim:
          if (payload.length !== 8) throw corrupt(im, pos, 'a TRIM frame without its seq');
          startSeq = Math.max(startSeq, payload.readDoubleBE(0));
          steps.push({ kind: 'skip' });
          break;
        case FrameType.Seal:
          sealed = true;
          if (payload.length > 0) sealProducer = parseJson<SealProducer>(im, pos, payload);
          steps.push({ kind: 'skip' });
          break;
        case FrameType.Create:
        case FrameType.Config:
          parseJson(im, pos, payload);
          steps.push({ kind: 'skip' });
          break;
        case FrameType.Pad:
        case FrameType.Catalog:
          steps.push({ kind: 'skip' });
          break;
        case FrameType.Delete:
          throw badImport(`the frames of stream ${im.s.meta.name} hold a DELETE frame: a deleted stream is not imported`);
        default:
          throw corrupt(im, pos, `unknown frame type ${String(type)} (types go up to ${LAST_TYPE})`);
      }
      pos += size;
    }
    im.hasData = hasData;
    im.next = next;
    im.startSeq = startSeq;
    im.sealed = sealed;
    im.sealProducer = sealProducer;
    return steps;
  }
}

/** The `m/` record of an import or adopt, checked: its stored meta. */
function checkImportedMeta(name: string, m: ImportedMeta): StoredMeta {
  if (typeof m !== 'object' || m === null || typeof m.meta !== 'object' || m.meta === null) throw badImport('the meta is missing');
  const stored = m.meta as unknown as StoredMeta;
  if (stored.name !== name) throw badImport(`the meta names stream ${JSON.stringify(stored.name)}, not ${JSON.stringify(name)}`);
  if (typeof stored.contentType !== 'string' || typeof stored.createdAtMs !== 'number') throw badImport('the meta needs contentType and createdAtMs');
  if (!Number.isSafeInteger(m.startSeq) || m.startSeq < 0 || typeof m.sealed !== 'boolean') throw badImport('startSeq must be a seq and sealed a boolean');
  return stored;
}

function parseJson<T>(im: Import, pos: number, payload: Buffer): T {
  try {
    return JSON.parse(payload.toString()) as T;
  } catch {
    throw corrupt(im, pos, 'a catalog frame whose payload is not JSON');
  }
}

function corrupt(im: Import, pos: number, why: string): SvcError {
  return new SvcError('data_corrupt', `import of stream ${im.s.meta.name}: the frame at byte ${pos} of a chunk (after ${im.frames} frames) is damaged (${why}); nothing was imported`);
}

function badImport(why: string): SvcError {
  return new SvcError('bad_request', `import: ${why}`);
}

/**
 * The ledger state of a stream opened after a move (object-commit.ts): the opener's fence and
 * next counter, and the `m/` record it imported. Not yet placed in this shard's writer: its first
 * group is recorded before it is acknowledged, as after a fence read.
 */
function openedLedger(l: OpenedLedger, meta: ImportedMeta): StreamLedgerState {
  return { fence: { nodeId: l.fence.nodeId, epoch: l.fence.epoch }, counter: l.counter, meta: { meta: meta.meta, startSeq: meta.startSeq, sealed: meta.sealed }, moved: null, placedIn: null };
}
