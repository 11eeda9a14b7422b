'use strict';
// Kafka listener throughput with librdkafka, against the durable segment-log ceiling of the same
// run. For each record size (100 B, 1 KiB):
//
//   1. ceiling: perf/micro/segment-log-write.js writes the same ~1 MB RecordBatch v2 frames a
//      librdkafka producer sends straight to a segment log (write + fdatasync, 2 groups in flight)
//   2. produce: perf/kafka/rdkafka-bench.c (librdkafka, acks=1) sends N records to a fresh node,
//      after 20,000 of warm-up to another topic
//   3. consume: the same program reads them back from offset 0 (simple consumer, no group)
//   4. transactional produce: the same records from a transactional producer (acks=all,
//      idempotent), committing every PERF_KAFKA_TXN_PER records (default 10,000), to another topic
//
// Prints a table and rewrites the "Kafka listener" section of perf/RESULTS.md (between the
// markers below; perf/run.js keeps that section when it rewrites the file).
// Needs gcc and librdkafka-dev (Debian). Usage: node perf/kafka/run.js   (about a minute)
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePorts, waitForPort, sleep } = require('../lib/util');

const ROOT = path.resolve(__dirname, '..', '..');
const PERF_DIR = path.join(ROOT, 'perf');
const BEGIN = '<!-- kafka-listener:begin (perf/kafka/run.js) -->';
const END = '<!-- kafka-listener:end -->';
/** Records per size: about 100 MB of values for 100 B, 200 MB for 1 KiB. */
const CASES = [
  { size: 100, records: Number(process.env.PERF_KAFKA_RECORDS_100 ?? 1_000_000) },
  { size: 1024, records: Number(process.env.PERF_KAFKA_RECORDS_1K ?? 200_000) },
];
const TXN_PER = Number(process.env.PERF_KAFKA_TXN_PER ?? 10_000);
/** Records produced to another topic before each measured produce. */
const WARM_UP_RECORDS = 20_000;
const GOAL_PRODUCE = 0.5;
const GOAL_CONSUME_MBS = 300;

function run(cmd, args) {
  return JSON.parse(execFileSync(cmd, args, { encoding: 'utf8', timeout: 180_000 }).trim().split('\n').pop());
}

/** CPU seconds (user + system, all threads) a process has used so far, from /proc; NaN when unreadable. */
function procCpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
  } catch {
    return NaN;
  }
}

/**
 * `run` for the client, with its CPU time (user + system) from bash's `time`, and the node's CPU
 * time over the same span: on a shared 2-core machine these move far less than MB/s does.
 */
function runTimed(nodePid, cmd, args) {
  const n0 = procCpuSeconds(nodePid);
  // The client's own stderr goes to fd 3 (ours); bash's `time` line comes back on the pipe.
  const r = spawnSync('bash', ['-c', 'TIMEFORMAT="CLIENT_CPU %U %S"; time "$@" 2>&3', 'run', cmd, ...args], { encoding: 'utf8', timeout: 180_000, stdio: ['ignore', 'pipe', 'pipe', 'inherit'] });
  const nodeCpu = procCpuSeconds(nodePid) - n0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  const m = /CLIENT_CPU ([0-9.]+) ([0-9.]+)/.exec(r.stderr);
  return { ...JSON.parse(r.stdout.trim().split('\n').pop()), nodeCpu, clientCpu: m === null ? NaN : Number(m[1]) + Number(m[2]) };
}

async function startNode(work) {
  const [listen, kafka] = await freePorts(2);
  const dataDir = path.join(work, 'node');
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist', 'main.js'), 'serve', '--listen', `127.0.0.1:${listen}`, '--kafka-listen', `127.0.0.1:${kafka}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  let dead = false;
  proc.once('exit', () => (dead = true));
  await waitForPort(kafka, { isDead: () => dead });
  return { broker: `127.0.0.1:${kafka}`, pid: proc.pid, stop: () => new Promise((r) => (dead ? r() : (proc.once('exit', r), proc.kill('SIGTERM')))) };
}

const mb = (bytes, s) => bytes / 1e6 / s;
const fmt = (v, d = 1) => v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-kafka-perf-'));
  const bin = path.join(work, 'rdkafka-bench');
  execFileSync('gcc', ['-O2', '-o', bin, path.join(__dirname, 'rdkafka-bench.c'), '-lrdkafka'], { stdio: 'inherit' });
  const librdkafka = execFileSync('dpkg-query', ['-W', '-f', '${Version}', 'librdkafka-dev'], { encoding: 'utf8' }).trim();
  const rows = [];
  const node = await startNode(work);
  try {
    for (const c of CASES) {
      const topic = `perf-${c.size}`;
      const ceiling = run(process.execPath, [path.join(PERF_DIR, 'micro', 'segment-log-write.js'), String(c.size), String(c.records), '1000000', work]);
      // A warm-up to another topic first: the figure is the node's steady cost, not its JIT compiling the produce path.
      run(bin, ['produce', node.broker, `${topic}-warm-up`, String(WARM_UP_RECORDS), String(c.size), '1']);
      const produced = runTimed(node.pid, bin, ['produce', node.broker, topic, String(c.records), String(c.size), '1']);
      if (produced.failed !== 0) throw new Error(`${produced.failed} records failed to produce`);
      await sleep(200);
      const consumed = run(bin, ['consume', node.broker, topic, String(c.records)]);
      const txn = run(bin, ['txn-produce', node.broker, `${topic}-txn`, String(c.records), String(c.size), String(TXN_PER)]);
      if (txn.failed !== 0) throw new Error(`${txn.failed} transactional records failed to produce`);
      const bytes = c.records * c.size;
      const row = {
        size: c.size,
        records: c.records,
        ceiling: { mbs: mb(ceiling.records * c.size, ceiling.seconds), rps: ceiling.records / ceiling.seconds },
        produce: {
          mbs: mb(bytes, produced.seconds),
          rps: c.records / produced.seconds,
          // CPU µs per MB of record values: the node (all threads) and the librdkafka client.
          nodeUsPerMB: (produced.nodeCpu * 1e6) / (bytes / 1e6),
          clientUsPerMB: (produced.clientCpu * 1e6) / (bytes / 1e6),
        },
        consume: { mbs: mb(consumed.bytes, consumed.streamingSeconds), rps: consumed.records / consumed.streamingSeconds, totalSeconds: consumed.seconds },
        txn: { mbs: mb(bytes, txn.seconds), rps: c.records / txn.seconds, transactions: txn.transactions },
      };
      row.ratio = row.produce.rps / row.ceiling.rps;
      // What the machine's cores allow when the node and the client (which share them) are busy all the time.
      row.cpuBoundMBs = (os.cpus().length * 1e6) / (row.produce.nodeUsPerMB + row.produce.clientUsPerMB);
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    await node.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
  const md = render(rows, librdkafka);
  console.log('\n' + md);
  const file = path.join(PERF_DIR, 'RESULTS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const section = `${BEGIN}\n${md}${END}\n`;
  const i = old.indexOf(BEGIN);
  const j = old.indexOf(END);
  const next = i >= 0 && j > i ? old.slice(0, i) + section + old.slice(j + END.length + 1) : `${old.trimEnd()}\n\n${section}`;
  fs.writeFileSync(file, next);
  console.log('perf: wrote the Kafka listener section of perf/RESULTS.md');
}

function render(rows, librdkafka) {
  const load = os.loadavg()[0].toFixed(2);
  // Share of time some task waited for a CPU (Linux PSI): the client and the node compete for the cores, the ceiling hardly does.
  let pressure = '';
  try {
    const m = /some avg10=([0-9.]+) avg60=([0-9.]+)/.exec(fs.readFileSync('/proc/pressure/cpu', 'utf8'));
    if (m !== null) pressure = `; CPU pressure (PSI "some", 10 s / 60 s): ${m[1]}% / ${m[2]}%`;
  } catch {
    // No PSI on this kernel.
  }
  const lines = [
    '## Kafka listener (librdkafka)',
    '',
    `- date: ${new Date().toISOString()}; node ${process.version}; ${os.cpus().length} cores; load average (1 min) at the end: ${load}${pressure} (other work on the machine skews every figure)`,
    `- client: perf/kafka/rdkafka-bench.c on librdkafka ${librdkafka} (Debian), one producer (acks=1, linger.ms=5, batch.size=1000000; 20,000 records of warm-up to another topic first) and one simple consumer, partition 0 of one topic`,
    '- ceiling: perf/micro/segment-log-write.js, the same ~1 MB record batches written to a segment log alone (write + fdatasync, two groups in flight), in the same run',
    '- MB/s count record values only; consume is timed from the first record received to the last (connection and offset lookup excluded)',
    `- transactional produce: the same program with transactional.id (acks=all, idempotent), a commit every ${TXN_PER.toLocaleString('en-US')} records, the time including every commit (EndTxn: markers written and made durable)`,
    '- produce CPU: CPU time per MB of record values over the produce run, of the node (all threads, /proc) and of the librdkafka client (bash `time`); "CPU bound" is the rate at which both together would keep every core of this machine busy (cores × 10^6 ÷ (node + client µs/MB)). The ceiling has no client and no network, so on a machine where client and node share the cores, produce ÷ ceiling cannot exceed CPU bound ÷ ceiling',
    '',
    '| record | records | segment log (ceiling) | produce | produce ÷ ceiling | produce CPU µs/MB node / client | CPU bound | consume | transactional produce | transactional ÷ plain |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.size} B | ${r.records.toLocaleString('en-US')} | ${fmt(r.ceiling.mbs)} MB/s, ${fmt(r.ceiling.rps, 0)} rec/s | ${fmt(r.produce.mbs)} MB/s, ${fmt(r.produce.rps, 0)} rec/s | ${fmt(r.ratio, 2)}× | ${fmt(r.produce.nodeUsPerMB, 0)} / ${fmt(r.produce.clientUsPerMB, 0)} | ${fmt(r.cpuBoundMBs)} MB/s | ${fmt(r.consume.mbs)} MB/s, ${fmt(r.consume.rps, 0)} rec/s | ${fmt(r.txn.mbs)} MB/s, ${fmt(r.txn.rps, 0)} rec/s | ${fmt(r.txn.rps / r.produce.rps, 2)}× |`,
    );
  }
  lines.push('', '| Goal | Result | Figure |', '|---|---|---|');
  for (const r of rows) {
    lines.push(`| ${r.size} B produce ≥ ${GOAL_PRODUCE * 100}% of the segment log | **${r.ratio >= GOAL_PRODUCE ? 'PASS' : 'FAIL'}** | ${fmt(r.ratio, 2)}× |`);
    lines.push(`| ${r.size} B consume ≥ ${GOAL_CONSUME_MBS} MB/s | **${r.consume.mbs >= GOAL_CONSUME_MBS ? 'PASS' : 'FAIL'}** | ${fmt(r.consume.mbs)} MB/s |`);
  }
  return lines.join('\n') + '\n';
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
