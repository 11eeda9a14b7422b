#!/usr/bin/env node
'use strict';
// Share groups (docs/protocol.md "Share groups", docs/kafka.md "Share groups"): how fast a share
// group drains a stream — HTTP workers through leases, and Kafka share members through ShareFetch
// and ShareAcknowledge — beside a classic Kafka consumer group (kafkajs, one consumer, autocommit)
// reading the same records from the same node in the same run.
//
//   share        PERF_SHARE_WORKERS HTTP workers (default 8), each: lease max=100 lock=30s, accept all, repeat
//   kafka share  PERF_SHARE_MEMBERS Kafka share members (default 4; lib/share-consumer.js on the node's
//                codecs: no installable client has a share consumer), each: ShareFetch, ShareAcknowledge, repeat
//   classic      one kafkajs consumer of a classic group, from the earliest offset, until it has every record
//
// Prints records/s, the acknowledgement latency (p50, p99 of the ack call, ms), the node's CPU
// per record (µs, user + system of all its threads) and the load average. The classic group has
// no per-record acknowledgement: its rate is the ceiling, its latency column is empty.
//
//   node perf/share-groups.js                      # PERF_SHARE_RECORDS=100000
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { cpuSeconds, intEnv } = require('./lib/util');
const { ShareConsumer } = require('./lib/share-consumer');

const records = intEnv('PERF_SHARE_RECORDS', 100_000, 10_000_000);
const workers = intEnv('PERF_SHARE_WORKERS', 8, 256);
const members = intEnv('PERF_SHARE_MEMBERS', 4, 64);
const size = 100;

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function share(node) {
  const at = (q) => `${node.baseUrl}/_share/bench?group=g${q}`;
  const patch = await fetch(at(''), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"share.auto.offset.reset":"earliest"}' });
  if (patch.status !== 200) throw new Error(`config: ${patch.status} ${await patch.text()}`);
  const lat = [];
  let done = 0;
  const cpu0 = cpuSeconds(node.pid);
  const t0 = performance.now();
  const worker = async () => {
    for (;;) {
      const l = await (await fetch(at('&op=lease&max=100&lock=30s'), { method: 'POST' })).json();
      if (l.records.length === 0) {
        if (done >= records) return;
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const a0 = performance.now();
      const res = await fetch(at('&op=ack'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lease: l.lease, accept: l.records.map((r) => r.seq) }) });
      const ans = await res.json();
      lat.push(performance.now() - a0);
      if (ans.refused.length > 0) throw new Error(`refused: ${JSON.stringify(ans.refused.slice(0, 3))}`);
      done += ans.applied.length;
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  const secs = (performance.now() - t0) / 1000;
  return { name: `share (${workers} HTTP workers)`, rate: done / secs, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), cpuUs: ((cpuSeconds(node.pid) - cpu0) / done) * 1e6, load: os.loadavg()[0] };
}

async function kafkaShare(node) {
  // Its own group, from the earliest record: the same records the HTTP workers drained.
  const at = `${node.baseUrl}/_share/bench?group=k`;
  const patch = await fetch(at, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"share.auto.offset.reset":"earliest"}' });
  if (patch.status !== 200) throw new Error(`config: ${patch.status} ${await patch.text()}`);
  const consumers = await Promise.all(Array.from({ length: members }, () => ShareConsumer.join(node.kafka, 'k', 'bench')));
  const lat = [];
  let done = 0;
  const cpu0 = cpuSeconds(node.pid);
  const t0 = performance.now();
  const member = async (c) => {
    while (done < records) {
      const offsets = await c.fetch(100);
      if (offsets.length === 0) continue;
      const a0 = performance.now();
      const applied = await c.accept(offsets);
      lat.push(performance.now() - a0);
      done += applied;
    }
  };
  await Promise.all(consumers.map(member));
  const secs = (performance.now() - t0) / 1000;
  const row = { name: `kafka share (${members} members)`, rate: done / secs, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), cpuUs: ((cpuSeconds(node.pid) - cpu0) / done) * 1e6, load: os.loadavg()[0] };
  await Promise.all(consumers.map((c) => c.leave()));
  return row;
}

async function classic(node) {
  const { Kafka, logLevel } = require('kafkajs');
  const kafka = new Kafka({ brokers: [node.kafka], clientId: 'perf', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: 'classic' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'bench', fromBeginning: true });
  let n = 0;
  const cpu0 = cpuSeconds(node.pid);
  const t0 = performance.now();
  await new Promise((resolve) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        n += batch.messages.length;
        if (n >= records) resolve();
      },
    });
  });
  const secs = (performance.now() - t0) / 1000;
  const cpuUs = ((cpuSeconds(node.pid) - cpu0) / n) * 1e6;
  await consumer.disconnect();
  return { name: 'classic group (kafkajs, 1 consumer)', rate: n / secs, p50: null, p99: null, cpuUs, load: os.loadavg()[0] };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'perf-share-'));
  const node = await startSvc(work, { name: 'svc-share' });
  try {
    const put = await fetch(`${node.baseUrl}/bench`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
    if (put.status !== 201) throw new Error(`create: ${put.status}`);
    await node.preload('bench', records, size);
    const rows = [await share(node), await kafkaShare(node), await classic(node)];
    console.log(`${records} records of ${size} bytes, one stream (one partition)`);
    console.log('| reader | records/s | ack p50 ms | ack p99 ms | node CPU µs/record | load |');
    console.log('|---|---|---|---|---|---|');
    const f = (x, d = 1) => (x === null ? '' : x.toFixed(d));
    for (const r of rows) console.log(`| ${r.name} | ${Math.round(r.rate)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.cpuUs)} | ${r.load.toFixed(2)} |`);
    console.log(`HTTP share ÷ classic: ${(rows[0].rate / rows[2].rate).toFixed(3)}; Kafka share ÷ classic: ${(rows[1].rate / rows[2].rate).toFixed(3)}`);
  } finally {
    await node.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
