/**
 * What both share-group edges (the Svc listener's `/_share/{stream}`, the Kafka listener's
 * ShareFetch/ShareAcknowledge) do with a share partition's records beyond the state machine:
 * read records by seq in the `json` read format (which serves committed data only), and append
 * archived records to the group's dead-letter stream. One place, so a record rejected over Kafka
 * lands in the dead letter exactly as one rejected over HTTP.
 */
import { type RecordInput, type ShardClient } from '../../shards';
import { type Acquired } from './share-partition';
import { type ShareGroupConfig } from './share-states';

/** A record in the `json` read format. */
export interface JsonRecord {
  seq: number;
  [field: string]: unknown;
}

/** Runs of consecutive numbers of an ascending list: [first, last] each. */
export function runsOf(seqs: readonly number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const s of seqs) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === s - 1) last[1] = s;
    else runs.push([s, s]);
  }
  return runs;
}

/** Every record of [first, last] in the `json` read format (several pages when it takes them); `pageBytes` bounds one read. */
export async function readRange(shards: ShardClient, name: string, first: number, last: number, pageBytes: number): Promise<JsonRecord[]> {
  const out: JsonRecord[] = [];
  let seq = first;
  while (seq <= last) {
    const r = await shards.read({ name, seq, count: last - seq + 1, bytes: pageBytes, format: 'json' });
    const page = JSON.parse(r.body.toString('utf8')) as JsonRecord[];
    out.push(...page.filter((x) => x.seq <= last));
    if (r.nextSeq <= seq || r.count === 0) break;
    seq = r.nextSeq;
  }
  return out;
}

/**
 * Append archived records to the group's dead-letter stream (none configured: they are only
 * archived), with headers naming where they came from. At least once: a node that dies after
 * this append and before the state is written appends them again when the lock ends once more.
 */
export async function deadLetter(shards: ShardClient, pageBytes: number, config: ShareGroupConfig, group: string, name: string, archived: readonly Acquired[]): Promise<void> {
  const dlq = config['errors.deadletterqueue.topic.name'];
  if (dlq === '' || archived.length === 0) return;
  const counts = new Map(archived.map((a) => [a.offset, a.deliveryCount]));
  const seqs = new Set(counts.keys());
  const records: RecordInput[] = [];
  const enc = (s: string): Uint8Array => Buffer.from(s, 'utf8');
  for (const [first, last] of runsOf([...seqs].sort((a, b) => a - b))) {
    for (const rec of await readRange(shards, name, first, last, pageBytes)) {
      if (!seqs.has(rec.seq)) continue;
      const bytes = (text: unknown, b64: unknown): Uint8Array | null => (typeof text === 'string' ? enc(text) : typeof b64 === 'string' ? Buffer.from(b64, 'base64') : null);
      const headers: Array<[Uint8Array, Uint8Array | null]> = [];
      const h = rec['headers'];
      if (typeof h === 'object' && h !== null) for (const [k, v] of Object.entries(h as Record<string, string>)) headers.push([enc(k), enc(v)]);
      headers.push([enc('svc-share-group'), enc(group)], [enc('svc-share-stream'), enc(name)], [enc('svc-share-seq'), enc(String(rec.seq))]);
      headers.push([enc('svc-share-delivery-count'), enc(String(counts.get(rec.seq) ?? 0))]);
      records.push({ key: bytes(rec['key'], rec['key_b64']), value: bytes(rec['body'], rec['body_b64']), headers });
    }
  }
  if (records.length > 0) await shards.append({ name: dlq, origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false });
}
