'use strict';
// The two remote legs of an objects-mode group commit, each alone (no other load), with the
// product's own code (dist/): a `file:` object PUT of a W1-sized group (create-only, its key
// announced ahead as the group commit does: write + fdatasync of the temporary file, link,
// directory fsync) and a ledger commit of one stream's entry in etcd (the fenced txn: compare f/,
// put o/, i/, r/). One at a time, so each figure is the leg's floor;
// `cluster-append.js` sets them beside what the same legs take under W1's load.

const fs = require('node:fs');
const path = require('node:path');
const { etcdCpuSeconds } = require('./util');

const DIST = path.resolve(__dirname, '..', '..', 'dist');
/** About one W1 group: ~30 single-record frames of a 100-byte record. */
const GROUP_BYTES = 4500;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];

async function timed(seconds, once) {
  const lat = [];
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t = process.hrtime.bigint();
    await once(i);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  lat.sort((a, b) => a - b);
  return { n: lat.length, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99) };
}

/** `file:` object PUTs alone, in `dir`: p50/p99 in ms. */
async function putFloor(dir, seconds = 1.5) {
  const { FileObjectStore } = require(path.join(DIST, 'objects', 'file-store.js'));
  const { groupObjectKey } = require(path.join(DIST, 'objects', 'index.js'));
  fs.mkdirSync(dir, { recursive: true });
  const store = new FileObjectStore(dir);
  const body = Buffer.alloc(GROUP_BYTES, 7);
  const key = (i) => groupObjectKey(1, 1, 0, i);
  try {
    // Announced eight ahead, as object-commit.ts does (the temporary files opened off the path).
    const prepare = (from) => store.prepare(Array.from({ length: 8 }, (_, k) => key(from + k)));
    prepare(0);
    return await timed(seconds, async (i) => {
      if (i % 8 === 6) prepare(i + 2);
      await store.put(key(i), [body], { ifAbsent: true });
    });
  } finally {
    await store.close();
  }
}

/** Ledger commits alone on `etcd` (ops/lib/etcd-local.js): p50/p99 in ms, and etcd's CPU per commit in µs. */
async function txnFloor(etcd, prefix, seconds = 2) {
  const { Ledger } = require(path.join(DIST, 'objects', 'index.js'));
  const ledger = Ledger.open(etcd.url(prefix));
  const stream = '/floor';
  const fence = { nodeId: 1, epoch: 1 };
  try {
    const took = await ledger.takeFence(stream, fence, { create: true });
    if (!took.ok) throw new Error('commit floor: could not take the fence of a new stream');
    const cpu0 = etcdCpuSeconds(etcd);
    const r = await timed(seconds, async (i) => {
      const res = await ledger.commit(`g/1/1/0/${String(i).padStart(12, '0')}`, GROUP_BYTES, [{ stream, fence, counter: i, off: 0, len: GROUP_BYTES, from: i * 30, to: (i + 1) * 30 }]);
      if (res.fenced.length > 0) throw new Error('commit floor: the ledger refused its own fence');
    });
    return { ...r, etcdUs: ((etcdCpuSeconds(etcd) - cpu0) / r.n) * 1e6 };
  } finally {
    ledger.close();
  }
}

/**
 * What creating one file costs this process's CPU in a new directory under `dir` (µs, the mean of
 * `n` creates; the files are removed after). On ext4 without a journal a create skips every inode
 * freed in the last minutes (`recently_deleted`), reading its inode block, so this moves with what
 * was deleted on the file system before (objects mode's reaper deletes hundreds of group objects
 * a second), and each group object's create pays it: a figure to read beside a run's CPU.
 */
function createCostUs(dir, n = 256) {
  const probe = fs.mkdtempSync(path.join(dir, 'create-probe-'));
  try {
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) fs.closeSync(fs.openSync(path.join(probe, String(i)), 'wx'));
    const c = process.cpuUsage(t);
    return (c.user + c.system) / n;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

module.exports = { putFloor, txnFloor, createCostUs, GROUP_BYTES };
