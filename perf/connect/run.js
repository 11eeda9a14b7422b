#!/usr/bin/env node
// svc-connectors throughput beside a bare Kafka consumer, in the same run on the same node:
//   bare      kafkajs consumer group → append value + "\n" to a file, fdatasync and commit per batch
//   file      the runtime's file sink (JS plugin)
//   c-file    the shipped native C file sink in its host process (isolation = "process")
//   c-inproc  the same library called in-process (isolation = "in_process")
//   postgres  the PostgreSQL sink into a real PostgreSQL 15 (skipped when its binaries are missing)
// plus the per-batch cost of process isolation (100-record batches through the host vs direct).
// Every sink run starts from a new consumer group on the same pre-filled topic and is timed from
// start to the last record durable in the target. Usage: node perf/connect/run.js [records]
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Kafka, logLevel } = require('kafkajs');

const ROOT = path.resolve(__dirname, '..', '..');
const N = Number(process.argv[2] || 200000);
const VALUE = 100; // bytes per record
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-perf-connect-'));
const children = [];
const cleanup = () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
process.on('exit', cleanup);

function startNode() {
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist', 'main.js'), 'serve', '--listen', '127.0.0.1:0', '--no-admin', '--kafka-listen', '127.0.0.1:0', '--data-dir', path.join(tmp, 'node')], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  return new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"node started"'));
      if (line) resolve(JSON.parse(line).kafka);
    });
  });
}

const lines = (f) => {
  try {
    return fs.statSync(f).size / (VALUE + 1);
  } catch {
    return 0;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runtime(name, kafka, definition) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'connectors'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.toml'), `[kafka]\nbootstrap_servers = "${kafka}"\n[connectors]\nconfig_dir = "${dir}/connectors"\n[state]\npath = "${dir}/state"\n[http]\naddress = "127.0.0.1:0"\n`);
  fs.writeFileSync(path.join(dir, 'connectors', 'sink.toml'), definition(dir));
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist', 'connect', 'main.js')], { env: { ...process.env, SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml'), RUST_LOG: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(proc);
  // Timed from the runtime's "started" line (its plugins open, its group not yet joined), as
  // the bare consumer is timed from before its connect and join: process start-up is not counted.
  await new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('svc-connectors started')) resolve();
    });
  });
  proc.stdout.resume();
  return { dir, stop: () => proc.kill('SIGTERM') };
}

async function timed(name, done) {
  const t0 = process.hrtime.bigint();
  while (!(await done())) await sleep(20);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return { name, seconds: s, rate: N / s };
}

async function bare(kafka, group = 'perf-bare') {
  const client = new Kafka({ clientId: 'perf-bare', brokers: [kafka], logLevel: logLevel.NOTHING });
  const c = client.consumer({ groupId: group, maxWaitTimeInMs: 100, maxBytesPerPartition: 1024 * 1024 });
  const file = path.join(tmp, `${group}.out`);
  const fd = fs.openSync(file, 'a');
  let n = 0;
  const r = timed('bare kafkajs consumer → file', async () => n >= N);
  await c.connect();
  await c.subscribe({ topic: 'perf', fromBeginning: true });
  await c.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const parts = [];
      for (const m of batch.messages) parts.push(m.value, Buffer.from('\n'));
      fs.writeSync(fd, Buffer.concat(parts));
      fs.fdatasyncSync(fd);
      await c.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) }]);
      n += batch.messages.length;
    },
  });
  const res = await r;
  await c.disconnect();
  fs.closeSync(fd);
  return res;
}

async function viaRuntime(kafka, name, label, def, done) {
  const rt = await runtime(name, kafka, def);
  const res = await timed(label, () => done(rt.dir));
  rt.stop();
  return res;
}

async function isolationCost() {
  const native = require(path.join(ROOT, 'dist', 'connect', 'native', 'index.js'));
  const lib = path.join(ROOT, 'dist', 'connect', 'libsvc_connector_c_file_sink.so');
  const records = Array.from({ length: 100 }, (_, i) => ({ topic: 'perf', partition: 0, offset: String(i), key: null, value: Buffer.alloc(VALUE, 120), timestamp: Date.now(), headers: {} }));
  const out = {};
  for (const isolation of ['in_process', 'process']) {
    const sink = native.createNativeSink(lib, isolation, 30000);
    await sink.open({ key: 'perf', log: () => undefined }, { path: path.join(tmp, `iso-${isolation}.out`) });
    const rounds = 2000;
    for (let i = 0; i < 200; i++) await sink.write(records);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) await sink.write(records);
    out[isolation] = Number(process.hrtime.bigint() - t0) / 1e3 / rounds; // µs per 100-record batch
    await sink.close();
  }
  return out;
}

async function startPostgres() {
  const BIN = '/usr/lib/postgresql/15/bin';
  if (!fs.existsSync(`${BIN}/postgres`)) return null;
  const dir = path.join(tmp, 'pg');
  fs.chmodSync(tmp, 0o755); // the server runs as nobody when we are root
  fs.mkdirSync(dir, { mode: 0o777 });
  fs.chmodSync(dir, 0o777);
  const as = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {};
  execFileSync(`${BIN}/initdb`, ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync'], { stdio: 'ignore', cwd: dir, ...as });
  const port = await new Promise((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => r(p));
    });
  });
  const proc = spawn(`${BIN}/postgres`, ['-D', path.join(dir, 'data'), '-h', '127.0.0.1', '-p', String(port), '-k', dir], { stdio: 'ignore', cwd: dir, ...as });
  children.push(proc);
  for (;;) {
    try {
      execFileSync(`${BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      break;
    } catch {
      await sleep(200);
    }
  }
  const sql = (q) => execFileSync(`${BIN}/psql`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-At', '-c', q], { encoding: 'utf8' }).trim();
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, sql };
}

async function main() {
  const kafka = await startNode();
  const client = new Kafka({ clientId: 'perf-fill', brokers: [kafka], logLevel: logLevel.NOTHING });
  const p = client.producer();
  await p.connect();
  const value = Buffer.alloc(VALUE, 97);
  for (let i = 0; i < N; i += 5000) await p.send({ topic: 'perf', acks: -1, messages: Array.from({ length: Math.min(5000, N - i) }, () => ({ value })) });
  await p.disconnect();

  const results = [];
  results.push(await bare(kafka));
  const fileDef = (plugin, extra = '', tag = extra ? 'x' : '') => (dir) => `type = "sink"\nkey = "perf-${plugin}${tag ? `-${tag}` : ''}"\npath = "${plugin}"\n${extra}\n[[topics]]\nnames = ["perf"]\n[plugin_config]\npath = "${dir}/out"\n`;
  if (process.env.SWEEP) {
    // SWEEP=1000,2000,5000: only the bare consumer and the JS file sink at each max_records (the
    // measurement behind the default batch size).
    for (const m of process.env.SWEEP.split(',').map(Number)) {
      results.push(await viaRuntime(kafka, `file-${m}`, `svc-connectors file sink (JS), max_records ${m}`, fileDef('libsvc_connector_file_sink', `[batch]\nmax_records = ${m}`, `m${m}`), (dir) => lines(path.join(dir, 'out')) >= N));
    }
    results.push(await bare(kafka, 'perf-bare-2'));
    const base = results[0].rate;
    for (const r of results) console.log(`| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.rate)} | ${(r.rate / base).toFixed(2)} |`);
    cleanup();
    process.exit(0);
  }
  results.push(await viaRuntime(kafka, 'file', 'svc-connectors file sink (JS), max_records 5000 (default)', fileDef('libsvc_connector_file_sink'), (dir) => lines(path.join(dir, 'out')) >= N));
  results.push(await viaRuntime(kafka, 'file1k', 'svc-connectors file sink (JS), max_records 1000', fileDef('libsvc_connector_file_sink', '[batch]\nmax_records = 1000', '1k'), (dir) => lines(path.join(dir, 'out')) >= N));
  results.push(await viaRuntime(kafka, 'file10k', 'svc-connectors file sink (JS), max_records 10000', fileDef('libsvc_connector_file_sink', '[batch]\nmax_records = 10000'), (dir) => lines(path.join(dir, 'out')) >= N));
  results.push(await viaRuntime(kafka, 'cfile', 'svc-connectors C file sink (host process, default batch)', fileDef('libsvc_connector_c_file_sink'), (dir) => lines(path.join(dir, 'out')) >= N));
  results.push(await viaRuntime(kafka, 'cfile-in', 'svc-connectors C file sink (in process, max_records 1000)', fileDef('libsvc_connector_c_file_sink', 'isolation = "in_process"\n[batch]\nmax_records = 1000'), (dir) => lines(path.join(dir, 'out')) >= N));
  const pg = await startPostgres();
  if (pg !== null) {
    results.push(
      await viaRuntime(kafka, 'pg', 'svc-connectors PostgreSQL sink', () => `type = "sink"\nkey = "perf-pg"\npath = "libsvc_connector_postgres_sink"\n[[topics]]\nnames = ["perf"]\n[plugin_config]\nconnection_string = "${pg.url}"\ntable = "perf"\npayload_format = "text"\n`, async () => {
        try {
          return Number(pg.sql('SELECT count(*) FROM perf')) >= N;
        } catch {
          return false;
        }
      }),
    );
  }
  const iso = await isolationCost();
  const base = results[0].rate;
  console.log(`\n${N} records of ${VALUE} bytes, one partition, node and clients on one machine (${os.cpus().length} cores)\n`);
  console.log('| consumer | seconds | records/s | ÷ bare consumer |');
  console.log('|---|---|---|---|');
  for (const r of results) console.log(`| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.rate)} | ${(r.rate / base).toFixed(2)} |`);
  console.log(`\nPer 100-record batch through the C file sink's write(): in process ${iso.in_process.toFixed(1)} µs, through the host process ${iso.process.toFixed(1)} µs (isolation costs ${(iso.process - iso.in_process).toFixed(1)} µs per batch).`);
  cleanup();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  cleanup();
  process.exit(1);
});
