/**
 * The snapshot file `meta.snapshot`: one frame (see frame.ts) whose body is
 * `{format: 1, appliedIndex, records: [{key, value, version}, …]}`, the whole view at
 * `appliedIndex`. It is replaced atomically (temporary file, fsync, rename, fsync of the
 * directory), so after a crash it is either the old snapshot or the new one.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { syncDir } from './durable-fs';
import { scanFrames, encodeFrame } from './frame';
import { type MetaRecord } from './meta-store';

export const SNAPSHOT_FILE = 'meta.snapshot';
const FORMAT = 1;

export interface Snapshot {
  appliedIndex: number;
  records: MetaRecord[];
}

/**
 * The snapshot in `dir`, or null when there is none. A snapshot that is not whole and valid is
 * refused: it was renamed into place only after its fsync, so damage is not a crash we can cut
 * away, and opening without it would silently lose every record it holds.
 */
export async function readSnapshot(dir: string): Promise<Snapshot | null> {
  const file = path.join(dir, SNAPSHOT_FILE);
  // A temporary file is a snapshot whose rename never happened; the old one (if any) stands.
  await fsp.rm(file + '.tmp', { force: true });
  let buf: Buffer;
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const corrupt = (why: string): Error =>
    new Error(`metadata snapshot ${file} is corrupt (${why}); refusing to open the metadata store: restore the file from a backup`);
  const { bodies, end } = scanFrames(buf);
  if (bodies.length !== 1 || end !== buf.length) throw corrupt('its frame is torn or fails its CRC');
  let s: { format?: unknown; appliedIndex?: unknown; records?: unknown };
  try {
    s = JSON.parse(bodies[0]!.toString('utf8')) as typeof s;
  } catch (e) {
    throw corrupt(`invalid JSON: ${(e as Error).message}`);
  }
  if (s.format !== FORMAT) throw corrupt(`unknown format ${String(s.format)}`);
  const appliedIndex = s.appliedIndex;
  if (!Number.isSafeInteger(appliedIndex) || (appliedIndex as number) < 0) throw corrupt('no appliedIndex');
  if (!Array.isArray(s.records)) throw corrupt('no records');
  for (const r of s.records as Array<Partial<MetaRecord> | null>) {
    const ok = r !== null && typeof r === 'object' && typeof r.key === 'string' && 'value' in r && Number.isSafeInteger(r.version) && r.version! >= 1 && r.version! <= (appliedIndex as number);
    if (!ok) throw corrupt(`a malformed record: ${JSON.stringify(r).slice(0, 200)}`);
  }
  return { appliedIndex: appliedIndex as number, records: s.records as MetaRecord[] };
}

/** Replace the snapshot in `dir` atomically; resolves once the new one is durable. */
export async function writeSnapshot(dir: string, snapshot: Snapshot): Promise<void> {
  const file = path.join(dir, SNAPSHOT_FILE);
  const tmp = file + '.tmp';
  const frame = encodeFrame(JSON.stringify({ format: FORMAT, appliedIndex: snapshot.appliedIndex, records: snapshot.records }));
  const fh = await fsp.open(tmp, 'w');
  try {
    await fh.writeFile(frame);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
  await syncDir(dir);
}
