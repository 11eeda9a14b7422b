/**
 * Read page buffers over HTTP (docs/storage.md, "Read page buffers"), on both engines: catch-up
 * pages of every format of the Svc and Durable Streams listeners are byte for byte what a node
 * with `--read-pool-bytes 0` serves from the same data directory; a buffer goes back to its
 * worker only once its body was sent, so a reader that stops reading a 12 MiB body while other
 * reads run, a reader that leaves mid-body, and a worker restarted while a body is out leave every
 * other body intact; and buffers are reused (svc_read_pool_*), or none of this would be tested.
 * The same for pages sent as views of the read cache (svc_read_cache_lent/returned), whose slabs
 * are lent until the page is sent.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

const MiB = 1024 * 1024;
/** Record `i` of stream `tag`: `size` ASCII bytes that say which record of which stream they are. */
const valueOf = (tag: string, i: number, size = 1000): string => `${tag}:${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26)));

async function poolMetrics(node: NodeProcess, family = 'svc_read_pool'): Promise<Record<string, number>> {
  const text = await (await fetch(`${node.adminUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${family}_([a-z]+)(?:_total)? (\\S+)$`, 'gm'))) out[m[1]!] = Number(m[2]);
  return out;
}

/**
 * How a large raw page leaves its worker: rendered into a page pool buffer (the read cache off),
 * or as views of the read cache's slabs, lent (ReadResult.parts; the default). Both go back once
 * sent: `metrics` names the counters that say so, and `reused` the figure that shows reuse.
 */
const PAGE_MODES = [
  { mode: 'pool pages', args: ['--read-cache-bytes', '0'], family: 'svc_read_pool', reused: 'reused' },
  { mode: 'read cache parts', args: [] as string[], family: 'svc_read_cache', reused: 'lent' },
] as const;

/** A Svc stream of `n` records made with JSON batch appends; returns its raw bytes. */
async function fillSvc(node: NodeProcess, name: string, n: number, size: (i: number) => number = () => 1000): Promise<Buffer> {
  expect((await fetch(`${node.url}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  const all: string[] = [];
  for (let at = 0; at < n; at += 1000) {
    const values = Array.from({ length: Math.min(1000, n - at) }, (_, k) => valueOf(name, at + k, size(at + k)));
    all.push(...values);
    const res = await fetch(`${node.url}/${name}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: values.map((body) => ({ body })) }) });
    expect(res.status).toBe(200);
  }
  return Buffer.from(all.join(''));
}

/** The Svc pages of `name` from seq 0 in `format`, `bytes` each: [next seq, body] per page. */
async function svcPages(node: NodeProcess, name: string, format: string, bytes: number): Promise<Array<[number, Buffer]>> {
  const pages: Array<[number, Buffer]> = [];
  for (let seq = 0; ; ) {
    const res = await fetch(`${node.url}/${name}?seq=${seq}&format=${format}&bytes=${bytes}&count=1000000`);
    expect(res.status).toBe(200);
    seq = Number(res.headers.get('svc-next-seq'));
    pages.push([seq, Buffer.from(await res.arrayBuffer())]);
    if (res.headers.get('svc-up-to-date') === 'true') return pages;
  }
}

/** The DS pages of `name` from the start: [next offset, body] per page. */
async function dsPages(node: NodeProcess, name: string): Promise<Array<[string, Buffer]>> {
  const pages: Array<[string, Buffer]> = [];
  for (let offset = '-1'; ; ) {
    const res = await fetch(`${node.dsUrl}/v1/stream/${name}?offset=${offset}`);
    expect(res.status).toBe(200);
    offset = res.headers.get('stream-next-offset')!;
    pages.push([offset, Buffer.from(await res.arrayBuffer())]);
    if (res.headers.get('stream-up-to-date') === 'true') return pages;
  }
}

interface SlowGet {
  /** Resolves once the head and the first body bytes arrived (the reader stops reading then). */
  started: Promise<void>;
  /** Read on to the end. */
  resume(): void;
  /** Leave: close the connection with the body partly read. */
  abort(): void;
  /** The whole body once read (after `resume`), or the bytes read before `abort`. */
  body: Promise<Buffer>;
}

/** GET `target` over a connection of its own that stops reading after the first body bytes. */
function slowGet(url: string, target: string): SlowGet {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  let raw = Buffer.alloc(0);
  let onStart: () => void = () => undefined;
  let onBody: (b: Buffer) => void = () => undefined;
  let onFail: (e: Error) => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  const body = new Promise<Buffer>((resolve, reject) => ((onBody = resolve), (onFail = reject)));
  let length = -1;
  let headEnd = -1;
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => {
    chunks.push(d);
    if (headEnd < 0) {
      raw = Buffer.concat(chunks);
      headEnd = raw.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = raw.subarray(0, headEnd).toString('latin1');
      if (!head.startsWith('HTTP/1.1 200')) onFail(new Error(`not a 200: ${head}`));
      length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
      socket.pause();
      onStart();
    }
    const have = chunks.reduce((a, c) => a + c.length, 0) - headEnd - 4;
    if (have >= length) {
      socket.destroy();
      onBody(Buffer.concat(chunks).subarray(headEnd + 4));
    }
  });
  socket.on('error', (e) => onFail(e));
  socket.on('close', () => onBody(headEnd < 0 ? Buffer.alloc(0) : Buffer.concat(chunks).subarray(headEnd + 4)));
  socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return { started, body, resume: () => socket.resume(), abort: () => socket.destroy() };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.each(['uws', 'node'] as const)('read page buffers on %s', (engine) => {
  test('catch-up pages of every format equal those of a node without the pool, from the same data directory', async () => {
    const dataDir = tempDir('svc-read-pool-');
    const args = ['--ds-listen', '127.0.0.1:0', '--shards', '1', '--shard-workers', '1', '--read-max-bytes', String(256 * 1024), '--read-default-bytes', String(256 * 1024)];
    /** Every page of every read: where it ends, its length and a digest of its bytes. */
    const read = async (node: NodeProcess): Promise<string[][]> => {
      const out: Array<Array<[number | string, Buffer]>> = [];
      for (const format of ['raw', 'binary', 'json']) out.push(await svcPages(node, 'eq', format, 200 * 1024));
      out.push(await dsPages(node, 'eq'), await dsPages(node, 'eq-json'));
      if (node === on) rawPages = out[0] as Array<[number, Buffer]>;
      return out.map((pages) => pages.map(([next, b]) => `${next} ${b.length} ${createHash('sha256').update(b).digest('hex')}`));
    };
    let rawPages: Array<[number, Buffer]> = [];
    const on = await startNode({ engine, dataDir, args });
    // Values of varied lengths, so pages end at different places in every format.
    const raw = await fillSvc(on, 'eq', 3000, (i) => 200 + ((i * 37) % 900));
    expect((await fetch(`${on.dsUrl}/v1/stream/eq-json`, { method: 'PUT', headers: { 'content-type': 'application/json' } })).status).toBe(201);
    for (let b = 0; b < 10; b++) {
      const body = JSON.stringify(Array.from({ length: 300 }, (_, k) => ({ n: b * 300 + k, text: valueOf('j', k, 100 + k) })));
      expect((await fetch(`${on.dsUrl}/v1/stream/eq-json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBeLessThan(300);
    }
    const pooled = await read(on);
    const again = await read(on);
    const m = await poolMetrics(on);
    await on.stop();
    expect(rawPages.length).toBeGreaterThan(5);
    expect(Buffer.concat(rawPages.map(([, b]) => b)).equals(raw)).toBe(true);
    expect(pooled[3]!.length).toBeGreaterThan(5);
    expect(pooled[4]!.length).toBeGreaterThan(3);
    expect(again).toEqual(pooled);
    // The pool was in use: buffers came back and later pages were rendered into them.
    expect(m['returned']).toBeGreaterThan(20);
    expect(m['reused']).toBeGreaterThan(20);

    const off = await startNode({ engine, dataDir, args: [...args, '--read-pool-bytes', '0'] });
    try {
      expect(await read(off)).toEqual(pooled);
      expect(await poolMetrics(off)).toEqual({});
    } finally {
      await off.stop();
    }
  });

  test('raw and binary pages sent as views of the read cache equal those of a node without the cache, from the same data directory', async () => {
    const dataDir = tempDir('svc-read-parts-');
    const args = ['--shards', '1', '--shard-workers', '1'];
    /** Pages of 1 MiB and of the whole stream, from seq 0 and from inside a batch: [next seq, digest]. */
    const read = async (node: NodeProcess): Promise<string[]> => {
      const out: string[] = [];
      for (const format of ['raw', 'binary']) {
        for (const bytes of [1 << 20, 16 << 20]) {
          for (const [next, b] of await svcPages(node, 'parts', format, bytes)) out.push(`${format} ${bytes} ${next} ${b.length} ${createHash('sha256').update(b).digest('hex')}`);
        }
        const res = await fetch(`${node.url}/parts?seq=7&format=${format}&bytes=${4 << 20}&count=1000000`);
        out.push(`${format} from 7: ${createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex')}`);
      }
      return out;
    };
    const on = await startNode({ engine, dataDir, args });
    let cached: string[];
    try {
      await fillSvc(on, 'parts', 6000, (i) => 300 + ((i * 53) % 1500));
      await read(on); // fills the cache
      cached = await read(on);
      const m = await poolMetrics(on, 'svc_read_cache');
      expect(m['lent']).toBeGreaterThan(4);
      await sleep(100);
      expect((await poolMetrics(on, 'svc_read_cache'))['returned']).toBe(m['lent']);
    } finally {
      await on.stop();
    }
    const off = await startNode({ engine, dataDir, args: [...args, '--read-cache-bytes', '0'] });
    try {
      expect(await read(off)).toEqual(cached);
    } finally {
      await off.stop();
    }
  });

  test('Durable Streams catch-up pages the read cache holds come as its views, byte for byte, a fork\'s too, and are handed back', async () => {
    const node = await startNode({ engine, args: ['--ds-listen', '127.0.0.1:0', '--shards', '1', '--shard-workers', '1'] });
    const dsOffset = (seq: number): string => `0000000000000000_${String(seq).padStart(16, '0')}`;
    const bin = { 'content-type': 'application/octet-stream' };
    const base = `${node.dsUrl}/v1/stream`;
    /** Every page from the start, joined. */
    const readAll = async (name: string): Promise<Buffer> => Buffer.concat((await dsPages(node, name)).map(([, b]) => b));
    try {
      expect((await fetch(`${base}/big`, { method: 'PUT', headers: bin })).status).toBe(201);
      const sent: Buffer[] = [];
      for (let i = 0; i < 24; i++) {
        const body = Buffer.from(valueOf(`big${i}`, i, 100_000));
        sent.push(body);
        expect((await fetch(`${base}/big`, { method: 'POST', headers: bin, body })).status).toBe(204);
      }
      const all = Buffer.concat(sent);
      const before = await poolMetrics(node, 'svc_read_cache');
      // The first pass fills the cache (and is itself sent as views of it); the second is served from it.
      for (let pass = 0; pass < 2; pass++) expect((await readAll('big')).equals(all)).toBe(true);
      const mid = await poolMetrics(node, 'svc_read_cache');
      expect(mid['lent']! - (before['lent'] ?? 0)).toBeGreaterThanOrEqual(2);

      // A fork at message 10 with records of its own: the source's page joined with the fork's.
      expect((await fetch(`${base}/fork`, { method: 'PUT', headers: { ...bin, 'stream-forked-from': '/v1/stream/big', 'stream-fork-offset': dsOffset(10) } })).status).toBe(201);
      const own: Buffer[] = [];
      for (let i = 0; i < 6; i++) {
        const body = Buffer.from(valueOf(`own${i}`, i, 100_000));
        own.push(body);
        expect((await fetch(`${base}/fork`, { method: 'POST', headers: bin, body })).status).toBe(204);
      }
      const forked = Buffer.concat([...sent.slice(0, 10), ...own]);
      for (let pass = 0; pass < 2; pass++) expect((await readAll('fork')).equals(forked)).toBe(true);
      await sleep(200);
      const after = await poolMetrics(node, 'svc_read_cache');
      expect(after['lent']! - (mid['lent'] ?? 0)).toBeGreaterThanOrEqual(1);
      // Every page lent came back once sent.
      expect(after['returned']).toBe(after['lent']);
    } finally {
      await node.stop();
    }
  });

  test.each(PAGE_MODES)('$mode: a reader that stops reading a 12 MiB body, and readers that leave mid-body, leave every other body intact', async ({ args, family, reused }) => {
    const node = await startNode({ engine, args: ['--shards', '1', '--shard-workers', '1', ...args] });
    try {
      const slow = await fillSvc(node, 'slow', 13_000);
      const others = [await fillSvc(node, 'o1', 13_000), await fillSvc(node, 'o2', 13_000)];
      const page = `seq=0&format=raw&bytes=${12 * MiB}&count=1000000`;
      const expected = (all: Buffer): Buffer => all.subarray(0, Math.floor((12 * MiB) / 1000) * 1000);
      const check = async (i: number): Promise<void> => {
        const res = await fetch(`${node.url}/o${(i % 2) + 1}?${page}`);
        expect(res.status).toBe(200);
        const b = Buffer.from(await res.arrayBuffer());
        expect(b.equals(expected(others[i % 2]!))).toBe(true);
      };
      const before = await poolMetrics(node, family);

      // The slow reader takes nothing until resume() below, which on a busy machine can be many
      // seconds away: the engine keeps its response for the write-idle timeout (60 s,
      // src/program/http/README.md). uWS's own 10 s timeout used to cut it, and this test flaked.
      const s = slowGet(node.url, `/slow?${page}`);
      await s.started;
      // Other pages of the same size go through the same pool while the slow body waits in the engine.
      for (let i = 0; i < 6; i++) await check(i);
      // Readers that leave mid-body, each while another read runs.
      for (let i = 0; i < 4; i++) {
        const gone = slowGet(node.url, `/o${(i % 2) + 1}?${page}`);
        await gone.started;
        const other = check(i + 1);
        gone.abort();
        await other;
      }
      await sleep(200);
      s.resume();
      const got = await s.body;
      expect(got.length).toBe(expected(slow).length);
      expect(got.equals(expected(slow))).toBe(true);
      for (let i = 0; i < 2; i++) await check(i);
      await sleep(100);
      const after = await poolMetrics(node, family);
      expect(after[reused]! - (before[reused] ?? 0)).toBeGreaterThan(3);
      expect(after['returned']! - (before['returned'] ?? 0)).toBeGreaterThan(5);
    } finally {
      await node.stop();
    }
  });
});

describe('read page buffers and a worker restart', () => {
  test.each(PAGE_MODES)('$mode: a body out while its worker restarts arrives intact, and its buffer is not handed to the new worker', async ({ args, family }) => {
    const faults = path.join(tempDir('svc-read-pool-ctl-'), 'faults');
    const node = await startNode({ args: ['--shards', '1', '--shard-workers', '1', ...args], env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults } });
    const ready = async (): Promise<number> => (await fetch(`${node.adminUrl}/ready`)).status;
    try {
      const all = await fillSvc(node, 'slow', 13_000);
      const page = `seq=0&format=raw&bytes=${12 * MiB}&count=1000000`;
      const expected = all.subarray(0, Math.floor((12 * MiB) / 1000) * 1000);
      // Kept by the engine while it reads nothing, up to the write-idle timeout (as above).
      const s = slowGet(node.url, `/slow?${page}`);
      await s.started;
      // Every index write fails: the worker stops at its next checkpoint; restarted once the fault is gone.
      fs.writeFileSync(faults, 'index-write');
      await fetch(`${node.url}/slow`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'x' });
      for (let i = 0; i < 300 && (await ready()) === 200; i++) await sleep(50);
      expect(await ready()).toBe(503);
      fs.rmSync(faults);
      for (let i = 0; i < 300 && (await ready()) !== 200; i++) await sleep(50);
      expect(await ready()).toBe(200);
      // The new worker's first slab or lent page (the same id as the old worker's first) is out with a second slow reader.
      const s2 = slowGet(node.url, `/slow?${page}`);
      await s2.started;
      s.resume();
      expect((await s.body).equals(expected)).toBe(true);
      await sleep(100);
      // The new worker got nothing back: that slab was the old worker's.
      expect((await poolMetrics(node, family))['returned'] ?? 0).toBe(0);
      // Had it freed its own slab of that id, this read would be rendered into the second reader's body.
      const res = await fetch(`${node.url}/slow?${page}`);
      expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
      const other = await fetch(`${node.url}/slow?seq=500&format=raw&bytes=${12 * MiB}&count=1000000`);
      // The rest of the stream (and the one-byte record appended as the fault began, if it was stored).
      const rest = Buffer.from(await other.arrayBuffer());
      expect(rest.length - (all.length - 500_000)).toBeLessThanOrEqual(1);
      expect(rest.subarray(0, all.length - 500_000).equals(all.subarray(500_000))).toBe(true);
      s2.resume();
      expect((await s2.body).equals(expected)).toBe(true);
      await sleep(100);
      expect((await poolMetrics(node, family))['returned']).toBe(3);
    } finally {
      await node.stop();
    }
  });
});
