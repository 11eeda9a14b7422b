'use strict';
// Micro-benchmark of a shard's index checkpoint (src/shards/worker/checkpointer.ts) when appends
// are spread over many streams (perf W2: every append is a chunk of its own): the ops a checkpoint
// builds (catalog-codec.ts `putChunk`: the chunk's K entry, and its stream's R entry of the segment
// with its first chunk there; builds before index version 3 wrote an R entry per chunk) written through the shard's RocksDB
// store (rocks-store.ts `openRocksStore`, synchronous, without sync), in batches of 512 chunks
// (CHECKPOINT_MAX_OPS, 1,024 writes). One or two builds, interleaved, a fresh store per round.
//
// Reports per build the wall time of the writes (what holds the shard's thread) and the process's
// CPU time (all threads: RocksDB flushes and compacts on its own) per chunk, medians of the rounds.
//
// Usage: node perf/micro/index-write.js [distA=dist] [distB] [chunks per round=200000] [rounds=5]
//        (after `npm run build`; distB e.g. a build of an older commit)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const dists = [process.argv[2] || 'dist', process.argv[3]].filter(Boolean).map((d) => path.resolve(ROOT, d));
const CHUNKS = Number(process.argv[4] || 200_000);
const ROUNDS = Number(process.argv[5] || 5);
const PER_BATCH = 512;
const STREAMS = 1000;
const FRAME_BYTES = 183; // the DATA frame of one 100 B record
const SEGMENT_BYTES = 64 << 20;

function load(dist) {
  const { openRocksStore } = require(path.join(dist, 'shards', 'worker', 'rocks-store.js'));
  const { putChunk } = require(path.join(dist, 'shards', 'worker', 'catalog-codec.js'));
  return { dist, openRocksStore, putChunk };
}

async function round(build) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-index-write-'));
  const store = await build.openRocksStore(dir);
  const seqs = new Array(STREAMS).fill(0);
  // Per stream, the segment whose R entry was written (StreamState.indexedSegId); older builds ignore it.
  const indexed = new Array(STREAMS).fill(-1);
  let pos = 0;
  let wallNs = 0n;
  const cpu0 = process.cpuUsage();
  for (let n = 0; n < CHUNKS; n += PER_BATCH) {
    const ops = [];
    for (let i = 0; i < PER_BATCH; i++) {
      const sid = (n + i) % STREAMS;
      const seq = seqs[sid]++;
      const segId = 1 + Math.floor(pos / SEGMENT_BYTES);
      build.putChunk(ops, sid, { baseSeq: seq, lastSeq: seq, segId, pos: pos % SEGMENT_BYTES, len: FRAME_BYTES, maxTs: 1_700_000_000_000 + n }, indexed[sid] === segId);
      indexed[sid] = segId;
      pos += FRAME_BYTES;
    }
    const t0 = process.hrtime.bigint();
    store.write(ops, false);
    wallNs += process.hrtime.bigint() - t0;
  }
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { wallUs: Number(wallNs) / 1000 / CHUNKS, cpuUs: (cpu.user + cpu.system) / CHUNKS };
}

async function main() {
  const builds = dists.map(load);
  const results = builds.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => i).reverse();
    for (const i of order) results[i].push(await round(builds[i]));
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  console.log(`${CHUNKS} chunks per round (${PER_BATCH} chunks a batch, ${STREAMS} streams), ${ROUNDS} rounds, medians:`);
  console.table(
    builds.map((b, i) => ({
      build: path.relative(ROOT, b.dist) || b.dist,
      'store.write wall µs per chunk': median(results[i].map((x) => x.wallUs)).toFixed(2),
      'CPU µs per chunk (all threads, ops built included)': median(results[i].map((x) => x.cpuUs)).toFixed(2),
    })),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
