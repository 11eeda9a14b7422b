/**
 * Where a source's records are in the topic, so a restart after a crash produces none of them
 * twice (docs/connectors.md "Where duplicates can appear").
 *
 * Every record a source produces carries the header `svc-source: <key>@<seq>`, where seq counts
 * the records the plugin has given since the connector first ran. The checkpoint saved after
 * each acknowledged batch holds, beside the plugin's state, the seq of the next record and, per
 * partition, an offset at or below which nothing later can land. After a crash between the
 * produce and the checkpoint save, the runtime reads each partition from that offset to its end
 * at startup, and the records it finds with its own key and a seq at or past the checkpoint's
 * are not produced again when the plugin gives them again. This relies on the SourcePlugin
 * contract that the n-th record after a checkpoint is the same record after a restart (its
 * bytes may differ, e.g. a generation time); a record whose key differs stops the skipping.
 *
 * Checkpoint layout: `SVCCP1 {"seq":N,"pos":{"<partition>":"<offset>"}}\n` then the plugin's
 * state bytes. A checkpoint without the prefix (saved by an earlier release) is the plugin's
 * state alone: it is read as such, with no position.
 */
export const SOURCE_HEADER = 'svc-source';

const MAGIC = 'SVCCP1 ';

export interface SourcePosition {
  /** seq of the next record the plugin will give. */
  seq: number;
  /** Per partition: an offset at or below which no record after the checkpoint is. */
  pos: Record<string, string>;
}

export function encodeCheckpoint(state: Buffer, p: SourcePosition): Buffer {
  return Buffer.concat([Buffer.from(`${MAGIC}${JSON.stringify({ seq: p.seq, pos: p.pos })}\n`), state]);
}

export function decodeCheckpoint(b: Buffer): { state: Buffer; position: SourcePosition | null } {
  if (b.length < MAGIC.length || b.toString('latin1', 0, MAGIC.length) !== MAGIC) return { state: b, position: null };
  const nl = b.indexOf(0x0a);
  if (nl < 0) return { state: b, position: null };
  try {
    const j = JSON.parse(b.toString('utf8', MAGIC.length, nl)) as { seq?: unknown; pos?: unknown };
    if (typeof j.seq !== 'number' || typeof j.pos !== 'object' || j.pos === null) return { state: b, position: null };
    return { state: b.subarray(nl + 1), position: { seq: j.seq, pos: j.pos as Record<string, string> } };
  } catch {
    return { state: b, position: null };
  }
}

export const sourceHeader = (key: string, seq: number): string => `${key}@${seq}`;

/** The seq of a record produced by source `key`, or null when the header is not ours. */
export function seqOf(key: string, header: string | undefined): number | null {
  if (header === undefined) return null;
  const at = header.lastIndexOf('@');
  if (at < 0 || header.slice(0, at) !== key) return null;
  const n = Number(header.slice(at + 1));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}
