'use strict';
// Memory benchmark: the node's RSS as stored data grows, and after a restart.
//
//   node perf/memory.js                       # 1M then 10M records, 1,000 streams; prints a Markdown table
//   PERF_MEM_RECORDS=1000000 node perf/memory.js
//
// One node (dist/main.js, a fresh data dir under perf/.work/), 1,000 streams, 100-byte records.
// Appends are interleaved across the streams (append i goes to stream i mod 1,000, 64 in flight),
// so no two consecutive frames of a segment belong to one stream and every append is a chunk of
// its own in the index: the index's worst case. Each append is one binary batch of
// PERF_MEM_BATCH records (default 10) to keep the run fast. RSS (VmRSS of the node process, all
// its threads) is read after each milestone once the node is idle (3 s), then the node is
// stopped, started again on the same data, and RSS is read again: once started, and once more
// after a catch-up read of one page of every stream and of one whole stream.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { freePorts, waitForPort, http, parallel, sleep } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');
/** The build under test (default dist/): PERF_MEM_DIST names another, e.g. a copy of an older build. */
const DIST = path.resolve(ROOT, process.env.PERF_MEM_DIST || 'dist');
const { encodeRecordBatch } = require(path.join(DIST, 'util', 'record-batch.js'));

const STREAMS = Number(process.env.PERF_MEM_STREAMS || 1000);
const BATCH = Number(process.env.PERF_MEM_BATCH || 10);
const RECORD = 100;
const IN_FLIGHT = Number(process.env.PERF_MEM_IN_FLIGHT || 64);
const MILESTONES = (process.env.PERF_MEM_RECORDS || '1000000,10000000').split(',').map(Number);
const EXTRA_ARGS = (process.env.PERF_MEM_ARGS || '').split(' ').filter(Boolean);
/** Node flags for the node under test (diagnosis, e.g. `--trace-gc`). */
const NODE_FLAGS = (process.env.PERF_MEM_NODE_FLAGS || '').split(' ').filter(Boolean);

const MiB = 1024 * 1024;
/** CPU seconds (user + system, all threads) the process has used: less disturbed by a loaded machine than a rate. */
const cpuOf = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const rssOf = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? (Number(m[1]) * 1024) / MiB : NaN;
};

async function startNode(dataDir, logFile) {
  const [port, kafkaPort] = await freePorts(2);
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, path.join(DIST, 'main.js'), 'serve', '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn', ...EXTRA_ARGS],
    { cwd: ROOT, stdio: ['ignore', fd, fd] },
  );
  fs.closeSync(fd);
  let exited = false;
  const exit = new Promise((resolve) => child.once('exit', () => ((exited = true), resolve())));
  await waitForPort(port, { timeoutMs: 120000, isDead: () => exited });
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit;
  };
  return { pid: child.pid, base: `http://127.0.0.1:${port}`, stop };
}

const streamName = (i) => `mem-${String(i).padStart(4, '0')}`;

function batchBody(first) {
  const records = [];
  for (let i = 0; i < BATCH; i++) {
    const value = Buffer.alloc(RECORD, 97);
    value.write(String(first + i).padStart(12, '0'));
    records.push({ key: null, value, headers: null });
  }
  return encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records });
}

async function main() {
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'mem-'));
  const dataDir = path.join(workDir, 'data');
  const logFile = path.join(workDir, 'node.log');
  const rows = [];
  let node = await startNode(dataDir, logFile);
  const cleanup = async () => {
    await node.stop();
    if (!process.env.PERF_MEM_KEEP) fs.rmSync(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    await sleep(2000);
    rows.push(['empty node', 0, rssOf(node.pid), '']);
    await parallel(STREAMS, 16, async (i) => {
      const r = await http('PUT', `${node.base}/${streamName(i)}`, { headers: { 'content-type': 'application/octet-stream' } });
      if (r.status !== 201 && r.status !== 200) throw new Error(`create → ${r.status}`);
    });
    let stored = 0;
    for (const target of MILESTONES) {
      const appends = Math.ceil((target - stored) / BATCH);
      const t0 = Date.now();
      const cpu0 = cpuOf(node.pid);
      const first = stored / BATCH;
      await parallel(appends, IN_FLIGHT, async (k) => {
        const a = first + k;
        const r = await http('POST', `${node.base}/${streamName(a % STREAMS)}`, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: batchBody(a * BATCH) });
        if (r.status !== 200 && r.status !== 204) throw new Error(`append → ${r.status} ${r.body.toString().slice(0, 200)}`);
      });
      stored += appends * BATCH;
      const secs = (Date.now() - t0) / 1000;
      const cpuUs = ((cpuOf(node.pid) - cpu0) * 1e6) / appends;
      await sleep(3000);
      rows.push([`after ${stored.toLocaleString('en')} records`, stored, rssOf(node.pid), `${Math.round((appends * BATCH) / secs).toLocaleString('en')} records/s, node CPU ${cpuUs.toFixed(0)} µs per append`]);
      console.error(`perf/memory: ${stored} records stored, RSS ${rssOf(node.pid).toFixed(0)} MiB`);
    }
    await node.stop();
    const t0 = Date.now();
    node = await startNode(dataDir, logFile);
    const startMs = Date.now() - t0;
    await sleep(3000);
    rows.push(['after a restart', stored, rssOf(node.pid), `ready in ${(startMs / 1000).toFixed(1)} s`]);
    await parallel(STREAMS, 16, async (i) => {
      const r = await http('GET', `${node.base}/${streamName(i)}?seq=0&format=raw&count=1000`);
      if (r.status !== 200) throw new Error(`read → ${r.status}`);
    });
    // One whole stream, page by page (1,000 records a page): every chunk of it is looked up.
    let seq = 0;
    const t1 = Date.now();
    for (;;) {
      const r = await http('GET', `${node.base}/${streamName(0)}?seq=${seq}&format=raw&count=1000`);
      const next = Number(r.headers['svc-next-seq']);
      if (r.status !== 200 || !(next > seq)) break;
      seq = next;
      if (r.headers['svc-up-to-date'] === 'true') break;
    }
    const readSecs = (Date.now() - t1) / 1000;
    await sleep(1000);
    rows.push(['after reading every stream', stored, rssOf(node.pid), `stream 0 (${seq.toLocaleString('en')} records) read in ${readSecs.toFixed(1)} s`]);
  } finally {
    await cleanup();
  }
  console.log(`Streams: ${STREAMS}, record: ${RECORD} B, ${BATCH} records per append, ${IN_FLIGHT} appends in flight, interleaved.\n`);
  console.log('| point | records stored | node RSS (MiB) | note |');
  console.log('|---|---:|---:|---|');
  for (const [what, n, rss, note] of rows) console.log(`| ${what} | ${n.toLocaleString('en')} | ${rss.toFixed(0)} | ${note} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
