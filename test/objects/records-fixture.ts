/**
 * A writer of the records format for tests against a real etcd and a `file:` store: group
 * objects of one writer (`g/1/1/0/`, fence A), each holding a frame of each stream named, each
 * recorded by one part record; what was written per stream, to compare with what is read back.
 */
import { randomBytes } from 'node:crypto';
import { type EtcdLink } from '../../src/actors';
import { type Fence, Ledger, type ObjectStore, Reaper, type StreamRecord, groupObjectKey, openObjectStore } from '../../src/objects';
import { FrameType, encodeFrame } from '../../src/shards/worker/frame';
import { tempDir } from '../helpers/node-process';

export const WRITER = 'g/1/1/0/';
export const A: Fence = { nodeId: 1, epoch: 1 };
export const B: Fence = { nodeId: 2, epoch: 2 };
export const g = (n: number): string => groupObjectKey(1, 1, 0, n);

export interface Writer {
  ledger: Ledger;
  store: ObjectStore;
  /** Per stream: the frames written, in order. */
  written: Map<string, Buffer[]>;
  n: number;
}

/** A writer on a ledger of its own under `name/<random>`. */
export async function recordsWriter(link: EtcdLink, name: string): Promise<Writer> {
  return { ledger: new Ledger(link, `${name}/${randomBytes(6).toString('hex')}`), store: openObjectStore(`file:${tempDir(`${name}-`)}`), written: new Map(), n: 0 };
}

/** One group object of the writer holding a frame of each stream, recorded in the records format. */
export async function group(w: Writer, streams: readonly string[]): Promise<void> {
  const token = await w.ledger.commitToken(WRITER);
  const n = w.n++;
  const body: Buffer[] = [];
  const recs: StreamRecord[] = [];
  let off = 0;
  for (const s of streams) {
    const seq = w.written.get(s)?.length ?? 0;
    const f = encodeFrame(FrameType.Data, 1, randomBytes(40 + seq));
    const first = seq === 0;
    recs.push({ stream: s, fence: A, ...(first ? { create: true, meta: { meta: {}, startSeq: 0, sealed: false }, position: g(n) } : {}), entries: [{ o: g(n), counter: n, off, len: f.length, from: seq, to: seq + 1 }] });
    w.written.set(s, [...(w.written.get(s) ?? []), f]);
    body.push(f);
    off += f.length;
  }
  await w.store.put(g(n), body, { ifAbsent: true });
  // Its run's h/ mark moves with it, as a writer's on a create-only store does (run-tails.ts).
  const r = await w.ledger.commitObjects(new Map([[g(n), off]]), recs, { writer: WRITER, from: 0, n }, { token, records: { writer: WRITER, firstObject: n } });
  if (r.fenced.length > 0) throw new Error(`group ${n}: fenced ${r.fenced.join(', ')}`);
}

/** The frames a stream's entries name, read back from the store. */
export async function read(w: Writer, stream: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const e of await w.ledger.entries(stream)) parts.push(await w.store.get(e.o, { offset: e.off, length: e.len }));
  return Buffer.concat(parts);
}

/** A reaper of the writer's ledger, holding the maintenance lease, with no grace and no run-tail pin (objects go once nothing keeps them). */
export async function reaperOf(link: EtcdLink, w: Writer): Promise<Reaper> {
  const key = `${w.ledger.keys.root.slice(0, -'.objects/'.length)}/k/maintenance`;
  const lease = await link.grantLease(30, 5_000);
  const held = await link.txnOnce([{ key, absent: true }], [{ put: key, value: Buffer.from('{"nodeId":1}'), lease }], []);
  return new Reaper({ kv: link, keys: w.ledger.keys, store: w.store, holder: () => ({ key, modRevision: held.revision }) }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 60_000 });
}
