'use strict';
// Micro-benchmark of the hop to the shard workers alone (no HTTP): ShardClient with one real
// worker thread (real segment files, real RocksDB), rounds of `concurrency` single-record 100 B
// appends to one stream, each round awaited. Reports appends/s, CPU µs per append of the main
// thread (the gateway's share: encoding, posting, reading replies, promises) and of the other
// threads (the worker, storage). Several builds alternate A B, B A, … (a copy of an older dist/
// under perf/.work/ for before/after).
// Usage: node perf/micro/shard-hop.js [rounds=3000] [concurrency=64] [repeats=3] [dist=dist] [dist2 …]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');

/** User + system seconds of one thread (`task`) or the whole process, from /proc. */
function cpu(file) {
  const s = fs.readFileSync(file, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ: 100 on Linux
}

async function one(dist, rounds, concurrency) {
  const { ShardClient } = require(path.join(dist, 'shards'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-hop-'));
  const log = { info() {}, warn() {}, error() {} };
  const c = await ShardClient.start({ dataDir, workers: 1, shards: 8, segmentBytes: 256 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10000 }, retentionIntervalMs: 3600000, reaperIntervalMs: 3600000, log });
  try {
    await c.create({ name: '/hop', contentType: 'application/octet-stream', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] });
    const value = Buffer.alloc(100, 97);
    // Builds before the typed boundary took three nullable fields instead of the payload union.
    const typed = fs.existsSync(path.join(dist, 'shards', 'protocol.js'));
    const params = () =>
      typed
        ? { name: '/hop', origin: 'http', payload: { kind: 'records', records: [{ key: null, value, headers: null }] }, contentType: 'application/octet-stream', close: false }
        : { name: '/hop', records: [{ key: null, value, headers: null }], batches: null, jsonBatch: null, contentType: 'application/octet-stream', close: false };
    const run = async (n) => {
      for (let r = 0; r < n; r++) {
        const ps = [];
        for (let i = 0; i < concurrency; i++) ps.push(c.append(params()));
        await Promise.all(ps);
      }
    };
    await run(200);
    const main0 = cpu(`/proc/self/task/${process.pid}/stat`);
    const all0 = cpu('/proc/self/stat');
    const t0 = process.hrtime.bigint();
    await run(rounds);
    const n = rounds * concurrency;
    const main = cpu(`/proc/self/task/${process.pid}/stat`) - main0;
    const all = cpu('/proc/self/stat') - all0;
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    return { appendsPerS: Math.round(n / secs), mainUs: (main * 1e6) / n, otherUs: ((all - main) * 1e6) / n };
  } finally {
    await c.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const rounds = Number(process.argv[2] ?? 3000);
  const concurrency = Number(process.argv[3] ?? 64);
  const repeats = Number(process.argv[4] ?? 3);
  const dists = (process.argv.length > 5 ? process.argv.slice(5) : ['dist']).map((d) => path.resolve(ROOT, d));
  if (process.env.SVC_HOP_CHILD) {
    console.log(JSON.stringify(await one(dists[0], rounds, concurrency)));
    return;
  }
  console.log(`load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log('| repeat | build | appends/s | main thread CPU µs per append | other threads CPU µs per append |\n|---|---|---|---|---|');
  for (let r = 0; r < repeats; r++) {
    for (const d of r % 2 === 0 ? dists : [...dists].reverse()) {
      // Each run in a process of its own: the builds' modules and threads never share one.
      const out = execFileSync(process.execPath, [__filename, String(rounds), String(concurrency), '1', d], { env: { ...process.env, SVC_HOP_CHILD: '1' }, encoding: 'utf8' });
      const x = JSON.parse(out.trim().split('\n').pop());
      console.log(`| ${r + 1} | ${path.relative(ROOT, d)} | ${x.appendsPerS} | ${x.mainUs.toFixed(2)} | ${x.otherUs.toFixed(2)} |`);
    }
  }
  console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
