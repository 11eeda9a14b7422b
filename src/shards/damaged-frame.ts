/**
 * What a damaged frame held, in the words `svc check` and `svc repair` print (docs/storage.md):
 * the stream and the seqs lost with it, not only the bytes. Two witnesses, neither vouched for by
 * the CRC that failed:
 *
 *   the frame's own header  ── type, stream id, and for DATA its batch's base offset and last
 *                              offset delta; used only when every field is plausible
 *   the index (when it opens) ── its chunks whose bytes overlap the damaged range: stream and seqs
 *
 * Stream names come from the index's catalog, and from CREATE and CATALOG frames in the logs
 * (an index that cannot be opened names nothing).
 */
import { readBatchHeader } from '../util/record-batch';
import { FRAME_HEADER, FrameType, LAST_TYPE } from './worker/frame';

/** What a damaged frame's header says, when it reads as a frame's header. */
export interface HeaderHint {
  type: FrameType;
  streamId: number;
  /** DATA: the seqs its batch names (first..last). */
  seqs: { first: number; last: number } | null;
}

/** An index chunk: stream `streamId`'s seqs `baseSeq..lastSeq` at bytes `pos..pos+len` of segment `segId`. */
export interface IndexedChunk {
  streamId: number;
  segId: number;
  pos: number;
  len: number;
  baseSeq: number;
  lastSeq: number;
}

const TYPE_NAMES: Record<number, string> = {
  [FrameType.Create]: 'CREATE',
  [FrameType.Delete]: 'DELETE',
  [FrameType.Trim]: 'TRIM',
  [FrameType.Seal]: 'SEAL',
  [FrameType.Config]: 'CONFIG',
  [FrameType.Pad]: 'PAD',
  [FrameType.Catalog]: 'CATALOG',
};

/** Read the header of the frame at `pos` of `buf` (a segment file), or null when it does not read as one. */
export function headerHint(buf: Buffer, pos: number): HeaderHint | null {
  if (pos + FRAME_HEADER > buf.length) return null;
  const len = buf.readUInt32BE(pos);
  const type = buf[pos + 8]!;
  if (len < 5 || pos + 8 + len > buf.length || type < FrameType.Data || type > LAST_TYPE) return null;
  const streamId = buf.readUInt32BE(pos + 9);
  if (type !== FrameType.Data) return { type, streamId, seqs: null };
  try {
    const h = readBatchHeader(buf.subarray(pos + FRAME_HEADER, pos + 8 + len), 0);
    if (h.magic !== 2 || h.baseOffset < 0 || h.lastOffsetDelta < 0 || !Number.isSafeInteger(h.baseOffset)) return null;
    return { type, streamId, seqs: { first: h.baseOffset, last: h.baseOffset + h.lastOffsetDelta } };
  } catch {
    return null;
  }
}

/**
 * One clause naming what bytes `pos..end` of segment `segId` held: from the header hint (if any)
 * and the index's chunks overlapping them (if the index opened).
 */
export function describeHeld(hint: HeaderHint | null, segId: number, pos: number, end: number, names: ReadonlyMap<number, string>, chunks: readonly IndexedChunk[] | null): string {
  const name = (id: number): string => names.get(id) ?? `id ${id} (its name is not known)`;
  const parts: string[] = [];
  if (hint !== null) {
    if (hint.type === FrameType.Data && hint.seqs !== null) parts.push(`its header says stream ${name(hint.streamId)}, seqs ${hint.seqs.first}..${hint.seqs.last}`);
    else if (hint.type === FrameType.Pad) parts.push('its header says padding (no records)');
    else if (hint.type === FrameType.Catalog) parts.push('its header says a CATALOG frame (streams\' state carried forward; no records)');
    else parts.push(`its header says stream ${name(hint.streamId)}'s ${TYPE_NAMES[hint.type] ?? hint.type} frame (no records)`);
  } else {
    parts.push('its header is unreadable');
  }
  if (chunks !== null) {
    const here = chunks.filter((c) => c.segId === segId && c.pos < end && c.pos + c.len > pos);
    if (here.length > 0) parts.push(`the index's chunks overlapping these bytes hold ${here.map((c) => `stream ${name(c.streamId)} seqs ${c.baseSeq}..${c.lastSeq}`).join(', ')}`);
    else parts.push('the index (as of its last checkpoint) has no chunk in these bytes');
  } else {
    parts.push('the index cannot tell');
  }
  return parts.join('; ');
}
