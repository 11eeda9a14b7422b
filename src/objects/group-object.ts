/**
 * What a group object holds besides its frames (docs/cluster.md, "Objects mode: where data
 * lives"), and the fence marker that may take a group object's name instead.
 *
 *   group object   = frames (each stream's contiguous) ‖ part table (JSON) ‖ u32 BE table length ‖ "SVCG"
 *   fence marker   = {by, at} (JSON) ‖ u32 BE length ‖ "SVCM"
 *
 * The part table names each stream's byte range and data seqs, so a group acknowledged before
 * the ledger recorded it can be found again from the object alone (tail-recovery.ts). Entries
 * index the frames by byte range: the table after them changes no reader. A fence marker is put
 * create-only under the first group object name a writer has not used, by the node that opens
 * one of its streams: the writer's own put of that name then fails, and it acknowledges nothing
 * from that name on.
 */
import { type Fence } from './ledger-keys';

/** One stream's frames in a group object: bytes off..off+len, data seqs [from, to). */
export interface GroupPart {
  stream: string;
  off: number;
  len: number;
  from: number;
  to: number;
  /**
   * Acknowledged once the object is durable, before the ledger records it (object-commit.ts):
   * tail recovery takes only these. A part of a group acknowledged only after its record is
   * never taken from the object: if that record fails, the group was never acknowledged.
   */
  early: boolean;
}

export type GroupObject = { kind: 'group'; parts: GroupPart[] } | { kind: 'marker'; by: Fence; at: number };

const GROUP_MAGIC = Buffer.from('SVCG');
const MARKER_MAGIC = Buffer.from('SVCM');
const TAIL = 8; // u32 length + magic

/** The bytes after a group's frames: its part table. */
export function groupTrailer(parts: readonly GroupPart[]): Buffer {
  return framed(Buffer.from(JSON.stringify(parts.map((p) => [p.stream, p.off, p.len, p.from, p.to, p.early ? 1 : 0]))), GROUP_MAGIC);
}

/** A fence marker put by the node holding `by`. */
export function fenceMarker(by: Fence): Buffer {
  return framed(Buffer.from(JSON.stringify({ by, at: Date.now() })), MARKER_MAGIC);
}

/** What a whole group object or marker holds; throws when it is neither (a damaged or foreign object). */
export function readGroupObject(buf: Buffer): GroupObject {
  if (buf.length < TAIL) throw new Error(`group object of ${buf.length} bytes: too short for its trailer`);
  const magic = buf.subarray(buf.length - 4);
  const len = buf.readUInt32BE(buf.length - TAIL);
  if (len > buf.length - TAIL) throw new Error(`group object trailer of ${len} bytes in an object of ${buf.length}`);
  const json = buf.subarray(buf.length - TAIL - len, buf.length - TAIL).toString('utf8');
  if (magic.equals(MARKER_MAGIC)) {
    const m = JSON.parse(json) as { by: Fence; at: number };
    return { kind: 'marker', by: m.by, at: m.at };
  }
  if (!magic.equals(GROUP_MAGIC)) throw new Error('not a group object: no part table at its end');
  const rows = JSON.parse(json) as unknown;
  const frames = buf.length - TAIL - len;
  if (!Array.isArray(rows)) throw new Error('group object part table is not a list');
  return {
    kind: 'group',
    parts: rows.map((r: unknown) => {
      const [stream, off, len, from, to, early] = r as [string, number, number, number, number, number];
      if (typeof stream !== 'string' || ![off, len, from, to].every(Number.isSafeInteger) || off < 0 || len < 0 || off + len > frames || from > to || (early !== 0 && early !== 1)) {
        throw new Error(`group object part table row ${JSON.stringify(r)} is not a part of the object`);
      }
      return { stream, off, len, from, to, early: early === 1 };
    }),
  };
}

/** Whether an object of `size` bytes may be a fence marker (the reaper reads only those). */
export function mayBeMarker(size: number): boolean {
  return size < 256;
}

function framed(body: Buffer, magic: Buffer): Buffer {
  const tail = Buffer.alloc(TAIL);
  tail.writeUInt32BE(body.length, 0);
  magic.copy(tail, 4);
  return Buffer.concat([body, tail]);
}
