#!/usr/bin/env node
/**
 * Gateway threads (`--gateway-threads`): W1 (single-record 100 B appends to one stream) and W2 (the
 * same spread over 64 streams, or SCALING_STREAMS) against a fresh single node per gateway thread count, with the CPU
 * per append of every thread of the node (main, gateway `svc-gw-*`, shard `svc-shard-*`, the rest
 * as `other`: libuv, RocksDB, V8) from /proc/<pid>/task/<tid>/stat over the measured seconds, and the
 * bound the busiest thread sets: 1 s ÷ its µs per append.
 *
 *   SCALING_THREADS=1,2,4        gateway thread counts (default 1,2)
 *   SCALING_LOADS=W1,W2,DS1,DS2,K1   loads (default W1,W2; DS1: W1's appends on a `--protocol ds` node, to /v1/stream/ds1;
 *                                DS2: W2's on such a node, to /v1/stream/w2-0000 …;
 *                                K1: Kafka produce, librdkafka producers of 100 B records, one topic each)
 *   SCALING_KAFKA_PRODUCERS=2    K1: producer processes (each its own connection, so its own gateway thread)
 *   SCALING_KAFKA_RECORDS=2000000 K1: records per producer (after 20,000 of warm-up each); SCALING_KAFKA_SIZE=100 bytes each
 *   SCALING_KAFKA_PARTITIONS=1   K1: partitions of each producer's topic, written round robin (each Produce request then carries them all)
 *   SCALING_SERVER_CPUS=0-7      taskset CPU list of the node (default: unpinned)
 *   SCALING_LOAD_CPUS=8-11       taskset CPU list of wrk (default: unpinned)
 *   SCALING_SHARD_WORKERS=2      --shard-workers (default 1)
 *   PERF_DURATION=5              seconds measured per run (after 2 s of warm-up)
 *   SCALING_STREAMS=64           W2: streams the appends are spread over (at most 10,000)
 *   SCALING_CONNECTIONS=64       wrk connections (wrk threads: SCALING_WRK_THREADS, default 1)
 *   SCALING_BASELINE=<build>/dist/main.js   also run every case on another build, just before
 *   SCALING_NODE_ARGS='--cpu-prof --cpu-prof-dir=prof'   node flags for the node (a profile per thread)
 *
 * Ports 0 throughout. K1 needs gcc and librdkafka-dev (perf/kafka/rdkafka-bench.c is compiled once per run).
 */
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');
const list = (v, d) => (v ?? d).split(',').map((s) => s.trim()).filter(Boolean);
const THREADS = list(process.env.SCALING_THREADS, '1,2').map(Number);
const LOADS = list(process.env.SCALING_LOADS, 'W1,W2');
const SERVER_CPUS = process.env.SCALING_SERVER_CPUS ?? '';
const LOAD_CPUS = process.env.SCALING_LOAD_CPUS ?? '';
const DURATION = Number(process.env.PERF_DURATION ?? 5);
const CONNECTIONS = Number(process.env.SCALING_CONNECTIONS ?? 64);
const WRK_THREADS = Number(process.env.SCALING_WRK_THREADS ?? 1);
const SHARD_WORKERS = Number(process.env.SCALING_SHARD_WORKERS ?? 1);
const SPREAD = Number(process.env.SCALING_STREAMS ?? 64);
const KAFKA_PRODUCERS = Number(process.env.SCALING_KAFKA_PRODUCERS ?? 2);
const KAFKA_RECORDS = Number(process.env.SCALING_KAFKA_RECORDS ?? 2_000_000);
const KAFKA_SIZE = Number(process.env.SCALING_KAFKA_SIZE ?? 100);
const KAFKA_PARTITIONS = Number(process.env.SCALING_KAFKA_PARTITIONS ?? 1);
const KAFKA_WARMUP = 20_000;
/** Extra node flags for the node, e.g. `--cpu-prof --cpu-prof-dir=<dir>` (every thread writes its own profile). */
const NODE_ARGS = (process.env.SCALING_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** Another build's dist/main.js: each run is made on it too, right before this build's (before/after in one run). */
const BASELINE = process.env.SCALING_BASELINE ?? '';
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

const pinned = (cpus, cmd, args) => (cpus === '' ? [cmd, args] : ['taskset', ['-c', cpus, cmd, ...args]]);

/** CPU ticks (user, system) and minor page faults per thread of `pid`, by role. */
function threadTicks(pid) {
  const out = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const role = tid === String(pid) ? 'main' : /^svc-(gw|shard)-/.test(comm) ? comm : 'other';
    const t = out.get(role) ?? { user: 0, sys: 0, faults: 0 };
    t.user += Number(f[11]);
    t.sys += Number(f[12]);
    t.faults += Number(f[7]); // minflt
    out.set(role, t);
  }
  return out;
}

function startNode(gatewayThreads, main, protocol = 'svc') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scaling-'));
  const [cmd, args] = pinned(SERVER_CPUS, process.execPath, [...NODE_ARGS, main, 'serve', '--data-dir', dataDir, '--protocol', protocol, '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--shard-workers', String(SHARD_WORKERS), '--gateway-threads', String(gatewayThreads), '--log-level', 'info']);
  const proc = spawn(cmd, args, { env: { ...process.env, SVC_RESERVE_BYTES: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the node did not start:\n${out}`)), 120_000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /"msg":"node started"/.test(out) && /"listen":"([^"]+)"/.exec(out.slice(out.indexOf('node started') - 400));
      if (!m) return;
      clearTimeout(timer);
      proc.stdout.removeAllListeners('data');
      proc.stdout.resume();
      // With taskset the node is taskset's child: its pid is the one that exec'd, the same.
      const k = /"kafka":"([^"]+)"/.exec(out.slice(out.indexOf('node started') - 400));
      resolve({ proc, url: `http://${m[1]}`, kafka: k === null ? null : k[1], dataDir });
    });
  });
}

async function http(method, url, body, type) {
  const r = await fetch(url, { method, body, headers: type ? { 'content-type': type } : {} });
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
}

function wrk(url, script, extra, seconds) {
  const [cmd, args] = pinned(LOAD_CPUS, 'wrk', [`-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', path.join(__dirname, 'wrk', script), url, '--', ...extra]);
  const out = execFileSync(cmd, args, { encoding: 'utf8' });
  const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
  return JSON.parse(line.slice(8));
}

/** perf/kafka/rdkafka-bench.c, compiled once per run (K1). */
let rdkafkaBench = null;
function kafkaBench() {
  if (rdkafkaBench !== null) return rdkafkaBench;
  const bin = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scaling-rdk-')), 'rdkafka-bench');
  execFileSync('gcc', ['-O2', '-o', bin, path.join(__dirname, 'kafka', 'rdkafka-bench.c'), '-lrdkafka'], { stdio: 'inherit' });
  rdkafkaBench = bin;
  return bin;
}

/** KAFKA_PRODUCERS producer processes at once, each `records` records to its own topic; resolves with the seconds the slowest took. */
async function produceAll(broker, records) {
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: KAFKA_PRODUCERS }, (_, i) => new Promise((resolve, reject) => {
      const [cmd, args] = pinned(LOAD_CPUS, kafkaBench(), ['produce', broker, `k1-${i}`, String(records), String(KAFKA_SIZE), '1', String(KAFKA_PARTITIONS)]);
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('exit', (code) => {
        const r = code === 0 ? JSON.parse(out.trim().split('\n').pop()) : null;
        if (r === null || r.failed !== 0) reject(new Error(`rdkafka-bench produce k1-${i}: exit ${code}, ${out}`));
        else resolve();
      });
    })),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** K1 with SCALING_KAFKA_PARTITIONS > 1: the producers' topics, with that many partitions (auto-created ones have one). */
async function createTopics(broker) {
  const { Kafka, logLevel } = require('kafkajs');
  const admin = new Kafka({ clientId: 'scaling', brokers: [broker], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: Array.from({ length: KAFKA_PRODUCERS }, (_, i) => ({ topic: `k1-${i}`, numPartitions: KAFKA_PARTITIONS })) });
  } finally {
    await admin.disconnect();
  }
}

/** Per-thread CPU µs per operation (and system time, page faults) between two threadTicks samples. */
function perOperation(before, after, ops) {
  const perThread = {};
  const detail = {};
  for (const [role, t] of after) {
    const b = before.get(role) ?? { user: 0, sys: 0, faults: 0 };
    const per = (d) => d / Math.max(1, ops);
    perThread[role] = per((t.user + t.sys - b.user - b.sys) * TICK_US);
    detail[role] = { sys: per((t.sys - b.sys) * TICK_US), faults: per(t.faults - b.faults) };
  }
  const busiest = Object.entries(perThread).filter(([k]) => k !== 'other').sort((a, b) => b[1] - a[1])[0];
  return { perThread, detail, busiest: busiest[0], bound: 1e6 / busiest[1] };
}

async function run(load, gatewayThreads, bodyFile, main) {
  const node = await startNode(gatewayThreads, main, load.startsWith('DS') ? 'ds' : 'svc');
  try {
    if (load === 'K1') {
      if (KAFKA_PARTITIONS > 1) await createTopics(node.kafka);
      await produceAll(node.kafka, KAFKA_WARMUP); // warm-up, and the topics are created
      const before = threadTicks(node.proc.pid);
      const seconds = await produceAll(node.kafka, KAFKA_RECORDS);
      const after = threadTicks(node.proc.pid);
      const records = KAFKA_RECORDS * KAFKA_PRODUCERS;
      return { load, gatewayThreads, rate: records / seconds, errors: 0, ...perOperation(before, after, records), mbPerOp: KAFKA_SIZE / 1e6 };
    }
    const type = 'application/octet-stream';
    let url;
    let extra;
    let script;
    if (load === 'DS1') {
      await http('PUT', `${node.url}/v1/stream/ds1`, undefined, type);
      [url, script, extra] = [`${node.url}/v1/stream/ds1`, 'append.lua', [bodyFile, type]];
    } else if (load === 'W1') {
      await http('PUT', `${node.url}/w1`, undefined, type);
      [url, script, extra] = [`${node.url}/w1`, 'append.lua', [bodyFile, type]];
    } else {
      // W2, or DS2: the same appends to a `--protocol ds` node's streams.
      const prefix = load === 'DS2' ? '/v1/stream/w2-' : '/w2-';
      const names = Array.from({ length: SPREAD }, (_, i) => `${node.url}${prefix}${String(i).padStart(4, '0')}`);
      for (let i = 0; i < names.length; i += 32) await Promise.all(names.slice(i, i + 32).map((u) => http('PUT', u, undefined, type)));
      [url, script, extra] = [node.url, 'append-spread.lua', [bodyFile, type, prefix, String(SPREAD)]];
    }
    wrk(url, script, extra, 2); // warm-up
    const before = threadTicks(node.proc.pid);
    const r = wrk(url, script, extra, DURATION);
    const after = threadTicks(node.proc.pid);
    return { load, gatewayThreads, rate: r.requests / (r.duration_us / 1e6), errors: r.errors, ...perOperation(before, after, r.requests), mbPerOp: null };
  } finally {
    node.proc.kill('SIGTERM');
    await new Promise((res) => node.proc.once('exit', res));
    fs.rmSync(node.dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const bodyFile = path.join(os.tmpdir(), `svc-scaling-body-${process.pid}`);
  fs.writeFileSync(bodyFile, Buffer.alloc(100, 0x61));
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; server CPUs ${SERVER_CPUS || 'any'}, load CPUs ${LOAD_CPUS || 'any'}; ${DURATION} s per run`);
  console.log('Per operation: an append (W1, W2, DS1) or a produced record (K1); K1 adds the node\'s CPU per MB of record values.');
  console.log('| build | load | gateway threads | operations/s | busiest thread | its µs/op | bound (ops/s) | serving threads together (main + svc-gw-*) | node µs/MB (K1) | µs/op per thread (of which system; page faults per op) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const builds = BASELINE === '' ? [['this', MAIN]] : [['baseline', BASELINE], ['this', MAIN]];
  try {
    for (const load of LOADS) {
      for (const n of THREADS) {
        for (const [build, main] of builds) {
          const r = await run(load, n, bodyFile, main);
          const serving = Object.entries(r.perThread).filter(([k]) => k === 'main' || k.startsWith('svc-gw-')).reduce((a, [, v]) => a + v, 0);
          const threads = Object.entries(r.perThread).sort().map(([k, v]) => `${k} ${v.toFixed(2)} (sys ${r.detail[k].sys.toFixed(2)}; ${r.detail[k].faults.toFixed(3)} pf)`).join(', ');
          const perMb = r.mbPerOp === null ? '' : (Object.values(r.perThread).reduce((a, v) => a + v, 0) / r.mbPerOp).toFixed(0);
          console.log(`| ${build} | ${r.load} | ${n} | ${Math.round(r.rate)} | ${r.busiest} | ${r.perThread[r.busiest].toFixed(2)} | ${Math.round(r.bound)} | ${serving.toFixed(2)} | ${perMb} | ${threads} |`);
        }
      }
    }
  } finally {
    fs.rmSync(bodyFile, { force: true });
  }
  console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
