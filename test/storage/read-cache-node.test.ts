/**
 * The read cache in a running node (docs/storage.md, "Read cache"; docs/metrics.md): raw pages
 * read again come from the cache and equal the first read, byte for byte, over HTTP; the
 * svc_read_cache_* metrics count it; `--read-cache-bytes 0` keeps nothing and reports nothing.
 */
import { startNode, type NodeProcess } from '../helpers/node-process';

async function metrics(adminUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^(svc_read_cache_\w+) (\S+)$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

async function fill(node: NodeProcess, name: string): Promise<Buffer> {
  expect((await fetch(`${node.url}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  const values: string[] = [];
  for (let b = 0; b < 20; b++) {
    const records = Array.from({ length: 250 }, (_, i) => `record-${b * 250 + i}-`.padEnd(20 + ((b * 250 + i) % 50), 'z'));
    values.push(...records);
    const res = await fetch(`${node.url}/${name}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: records.map((body) => ({ body })) }) });
    expect(res.status).toBe(200);
  }
  return Buffer.from(values.join(''));
}

/** The stream read start to end in pages of `bytes`, raw: the pages joined. */
async function readAll(node: NodeProcess, name: string, bytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let seq = 0; ; ) {
    const res = await fetch(`${node.url}/${name}?seq=${seq}&format=raw&bytes=${bytes}`);
    expect(res.status).toBe(200);
    parts.push(Buffer.from(await res.arrayBuffer()));
    seq = Number(res.headers.get('svc-next-seq'));
    if (res.headers.get('svc-up-to-date') === 'true') return Buffer.concat(parts);
  }
}

describe('the read cache of a node', () => {
  let node: NodeProcess;
  afterEach(async () => node?.kill());

  it('serves raw pages read again from the cache, equal to the first read, and counts it', async () => {
    node = await startNode();
    const written = await fill(node, 'cached');
    const before = await metrics(node.adminUrl!);
    expect(before.get('svc_read_cache_hits_total')).toBe(0);
    expect((await readAll(node, 'cached', 1 << 20)).equals(written)).toBe(true);
    const first = await metrics(node.adminUrl!);
    expect(first.get('svc_read_cache_fills_total')).toBeGreaterThan(0);
    expect(first.get('svc_read_cache_bytes')).toBeGreaterThan(written.length);
    // Small pages: each chunk is rendered once and every page after its first is a hit.
    expect((await readAll(node, 'cached', 4096)).equals(written)).toBe(true);
    const second = await metrics(node.adminUrl!);
    expect(second.get('svc_read_cache_fills_total')).toBe(first.get('svc_read_cache_fills_total'));
    expect(second.get('svc_read_cache_hits_total')!).toBeGreaterThan(first.get('svc_read_cache_hits_total')! + 20);
  });

  it('keeps nothing and reports no cache with --read-cache-bytes 0, serving the same bytes', async () => {
    node = await startNode({ args: ['--read-cache-bytes', '0'] });
    const written = await fill(node, 'cold');
    expect((await readAll(node, 'cold', 4096)).equals(written)).toBe(true);
    expect((await readAll(node, 'cold', 1 << 20)).equals(written)).toBe(true);
    expect(await metrics(node.adminUrl!)).toEqual(new Map());
  });
});
