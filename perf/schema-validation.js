#!/usr/bin/env node
'use strict';
// Schema validation at the broker (docs/schema-registry.md, "Validation at the broker"): the
// node's CPU per produced record on a topic with confluent.value.schema.validation=true, beside
// an unvalidated topic in the same run (the anchor), both fed the same registry-framed Avro
// records by one kafkajs producer. Phases alternate (plain, validated, plain, validated…) so a
// busy neighbour weighs on both alike; CPU is the node process's (user + system, all threads).
//
//   node perf/schema-validation.js    # PERF_RECORDS (default 200000) records per phase,
//                                     # PERF_BATCH (default 200) records per produce batch,
//                                     # PERF_IN_FLIGHT (default 8) batches in flight,
//                                     # PERF_ROUNDS (default 2) rounds of both phases
//   PERF_BASELINE=<other build>/dist/main.js node perf/schema-validation.js
//                                     # also the plain phase on another build (e.g. before this
//                                     # change): the unvalidated topic's cost, old against new
//
// Prints its figures; writes no file. Needs `npm run build` first (it starts dist/main.js).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Kafka, logLevel } = require('kafkajs');
const { cpuSeconds, intEnv } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');
const RECORDS = intEnv('PERF_RECORDS', 200_000, 10_000_000);
const BATCH = intEnv('PERF_BATCH', 200, 10_000);
const IN_FLIGHT = intEnv('PERF_IN_FLIGHT', 8, 256);
const ROUNDS = intEnv('PERF_ROUNDS', 2, 20);

function startNode(main, dataDir, registry) {
  const args = [main, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir, ...(registry ? ['--schema-registry-listen', '127.0.0.1:0'] : [])];
  const proc = spawn(process.execPath, args, { env: { ...process.env, SVC_RESERVE_BYTES: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start:\n${out}`)), 20_000);
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"node started"'));
      if (line === undefined) return;
      clearTimeout(timer);
      const j = JSON.parse(line);
      resolve({ proc, kafka: j.kafka, registry: j.schemaRegistry ? `http://${j.schemaRegistry}` : null });
    });
    proc.stderr.on('data', (d) => (out += d.toString()));
    proc.once('exit', (code) => reject(new Error(`node exited with ${code}:\n${out}`)));
  });
}

const SCHEMA = { type: 'record', name: 'Order', namespace: 'perf', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }, { name: 'qty', type: 'int' }] };

/** The Avro encoding of {id, item, qty} (zig-zag varints, length-prefixed string), framed with `id`. */
function framed(schemaId, i) {
  const zz = (n) => {
    const out = [];
    let v = BigInt(n) >= 0n ? BigInt(n) << 1n : (-BigInt(n) << 1n) - 1n;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      out.push(b);
    } while (v > 0n);
    return Buffer.from(out);
  };
  const item = Buffer.from(`item-${i % 1000}`);
  const head = Buffer.alloc(5);
  head.writeInt32BE(schemaId, 1);
  return Buffer.concat([head, zz(i), zz(item.length), item, zz(i % 7)]);
}

async function phase(producer, pid, topic, messages) {
  const cpu0 = cpuSeconds(pid);
  const t0 = process.hrtime.bigint();
  let next = 0;
  const batches = Math.ceil(RECORDS / BATCH);
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let b = next++; b < batches; b = next++) await producer.send({ topic, acks: 1, messages });
    }),
  );
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuSeconds(pid) - cpu0;
  return { topic, usPerRecord: (cpu / (batches * BATCH)) * 1e6, recordsPerS: (batches * BATCH) / secs };
}

async function withNode(main, registry, fn) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-perf-validation-'));
  const node = await startNode(main, dataDir, registry);
  const kafka = new Kafka({ clientId: 'perf-validation', brokers: [node.kafka], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await admin.connect();
    await producer.connect();
    return await fn({ node, admin, producer });
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    node.proc.kill('SIGTERM');
    await new Promise((r) => node.proc.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const load = os.loadavg()[0].toFixed(1);
  console.log(`schema validation: ${RECORDS} records per phase, batches of ${BATCH}, ${IN_FLIGHT} in flight, ${ROUNDS} rounds; load average ${load}, ${os.cpus().length} CPUs`);
  const rows = await withNode(path.join(ROOT, 'dist', 'main.js'), true, async ({ node, admin, producer }) => {
    const res = await fetch(`${node.registry}/subjects/perf-valid-value/versions`, { method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify({ schema: JSON.stringify(SCHEMA) }) });
    const { id } = await res.json();
    await admin.createTopics({ topics: [{ topic: 'perf-plain' }, { topic: 'perf-valid', configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }] }] });
    const messages = Array.from({ length: BATCH }, (_, i) => ({ value: framed(id, i) }));
    // Warm-up: the decoder compiled, the connection and JIT warm.
    await phase(producer, node.proc.pid, 'perf-valid', messages);
    await phase(producer, node.proc.pid, 'perf-plain', messages);
    const out = [];
    for (let r = 0; r < ROUNDS; r++) {
      out.push(await phase(producer, node.proc.pid, 'perf-plain', messages));
      out.push(await phase(producer, node.proc.pid, 'perf-valid', messages));
    }
    return out;
  });
  const mean = (topic, key) => {
    const xs = rows.filter((r) => r.topic === topic).map((r) => r[key]);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  for (const r of rows) console.log(`  ${r.topic.padEnd(11)} ${r.usPerRecord.toFixed(2).padStart(7)} µs CPU/record  ${Math.round(r.recordsPerS).toString().padStart(8)} records/s`);
  const plain = mean('perf-plain', 'usPerRecord');
  const valid = mean('perf-valid', 'usPerRecord');
  console.log(`unvalidated ${plain.toFixed(2)} µs/record, validated ${valid.toFixed(2)} µs/record: validation adds ${(valid - plain).toFixed(2)} µs/record (×${(valid / plain).toFixed(2)})`);
  if (process.env.PERF_BASELINE) {
    const base = await withNode(process.env.PERF_BASELINE, false, async ({ node, admin, producer }) => {
      await admin.createTopics({ topics: [{ topic: 'perf-plain' }] });
      const messages = Array.from({ length: BATCH }, (_, i) => ({ value: framed(1, i) }));
      await phase(producer, node.proc.pid, 'perf-plain', messages);
      const out = [];
      for (let r = 0; r < ROUNDS; r++) out.push(await phase(producer, node.proc.pid, 'perf-plain', messages));
      return out;
    });
    const b = base.reduce((a, r) => a + r.usPerRecord, 0) / base.length;
    console.log(`baseline build (${process.env.PERF_BASELINE}), unvalidated: ${b.toFixed(2)} µs/record; this build ×${(plain / b).toFixed(2)}`);
  }
  console.log(`load average after: ${os.loadavg()[0].toFixed(1)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
