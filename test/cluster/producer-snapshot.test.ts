/**
 * Producer snapshots across a move (docs/objects.md, "Producer state across a move"): 3 nodes on
 * `--objects-reads remote`; an idempotent HTTP producer writes 20 MB to a stream in 2 MB
 * appends (entries compaction leaves alone), so its owner names a producer snapshot (`p/<name>`) after 16 MiB. The stream is
 * transferred, and then its new owner is killed and its data directory wiped: after each move,
 * every acknowledgement the producer still has kept (the last 5) is answered as a duplicate with
 * its original seqs, the next sequence is appended, and the new owner read only the entries after
 * the snapshot from the object store, not the stream.
 */
import { Ledger } from '../../src/objects';
import { type NodeProcess } from '../helpers/node-process';
import { objectsClusterForFile, sleep, until } from './objects-cluster';
import { follow } from './writers';

jest.setTimeout(180_000);

const c = objectsClusterForFile(['--node-lease-ttl', '3', '--objects-reads', 'remote']);
const NAME = '/snap/stream';
const MiB = 1 << 20;

async function getBytes(n: NodeProcess): Promise<number> {
  const text = await (await fetch(`${n.adminUrl!}/metrics`)).text();
  const m = /^svc_object_store_bytes_total\{op="get"\} (\d+)/m.exec(text);
  return m === null ? 0 : Number(m[1]);
}

/**
 * Append `seq` of the producer as a client following the protocol does: 307s followed, a refused
 * connection (a redirect to the killed owner, until its lease runs out) or a 503 sent again.
 */
async function append(seq: number, short?: string): Promise<{ status: number; start: string | null; next: string | null; duplicate: boolean }> {
  const end = Date.now() + 30_000;
  for (;;) {
    const r = await appendOnce(seq, short).catch((err: unknown) => (Date.now() < end ? null : Promise.reject(err)));
    if (r !== null && (r.status !== 503 || Date.now() >= end)) return r;
    await sleep(200);
  }
}

/** Append `seq` of the producer: two records of about 1 MB (a record is at most 1 MiB), or one short one. */
async function appendOnce(seq: number, short?: string): Promise<{ status: number; start: string | null; next: string | null; duplicate: boolean }> {
  const records = short !== undefined ? [{ body: short }] : [0, 1].map((j) => ({ body: String.fromCharCode(97 + ((seq + j) % 26)).repeat(1_000_000) }));
  const r = await follow(`${c.any().url}${NAME}`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.svc.batch+json', 'svc-producer-id': 'snap-writer', 'svc-producer-epoch': '0', 'svc-producer-seq': String(seq) },
    body: JSON.stringify({ records }),
  });
  await r.arrayBuffer();
  return { status: r.status, start: r.headers.get('svc-start-seq'), next: r.headers.get('svc-next-seq'), duplicate: r.headers.get('svc-producer-duplicate') === 'true' };
}

test('a moved stream\'s producers come from its snapshot and the entries after it: every kept acknowledgement is a duplicate after a transfer and after a failover', async () => {
  const ledger = Ledger.open(c.metadataUrl);
  try {
    const created = await follow(`${c.any().url}${NAME}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    expect([200, 201]).toContain(created.status);
    const acks: Array<{ start: string | null; next: string | null }> = [];
    for (let seq = 0; seq < 10; seq++) {
      const a = await append(seq);
      expect(a).toMatchObject({ status: 200, duplicate: false });
      acks.push({ start: a.start, next: a.next });
    }
    const snapshot = await until('the producer snapshot', () => ledger.producerSnapshot(NAME));
    expect(snapshot.seq).toBeGreaterThanOrEqual(16);

    const retryKept = async (): Promise<void> => {
      for (let seq = 5; seq < 10; seq++) {
        const a = await append(seq);
        expect({ seq, ...a }).toEqual({ seq, status: 200, duplicate: true, ...acks[seq] });
      }
    };
    const owner = async (): Promise<number> => (await c.detail(NAME)).ownerNodeId;

    // A transfer: the new owner reads the snapshot and the entries after it, not 20 MiB.
    const first = await owner();
    const to = [1, 2, 3].find((id) => id !== first)!;
    const before = await getBytes(c.nodes.get(to)!);
    const moved = await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: NAME, toNode: to }) });
    expect(moved.status).toBeLessThan(300);
    await until('the transfer', async () => ((await owner()) === to ? true : null));
    await retryKept();
    const read = (await getBytes(c.nodes.get(to)!)) - before;
    console.log(`producer-snapshot: snapshot at seq ${snapshot.seq}; the new owner read ${read} bytes from the store for the replay and the retries`);
    expect(read).toBeLessThan(10 * MiB);
    const next = await append(10, 'ten');
    expect(next).toMatchObject({ status: 200, duplicate: false, start: acks[9]!.next });
    acks.push({ start: next.start, next: next.next });

    // A failover: the owner is killed and wiped; whoever takes the stream knows the producer.
    await c.killAndWipe(to);
    await until('a new owner', async () => {
      const o = await owner().catch(() => to);
      return o !== to ? o : null;
    }, 30_000);
    for (let seq = 6; seq <= 10; seq++) {
      const a = await append(seq, seq === 10 ? 'ten' : undefined);
      expect({ seq, ...a }).toEqual({ seq, status: 200, duplicate: true, ...acks[seq] });
    }
    expect(await append(11, 'eleven')).toMatchObject({ status: 200, duplicate: false, start: acks[10]!.next });
  } finally {
    ledger.close();
  }
});
