#!/usr/bin/env node
'use strict';
// Catch-up of a moved stream (issue "nodes that are truly replaceable"; docs/objects.md, "Reads
// from the object store"): W5's shape (1 KiB records, raw, one keep-alive reader) on one stream of
// PERF_MOVED_MIB MiB (default 512), in the same run:
//
//   local        the node that took the appends reads it (its segments, page cache, read cache)
//   moved-cold   after a transfer to a second node with --objects-reads remote: the first pass,
//                every record fetched from the `file:` object store through the range cache
//   moved-warm   the passes after it (cache hits while the stream fits --objects-cache-bytes)
//
//   node perf/moved-catchup.js                  # PERF_DURATION (default 5 s) of timed passes per side
//   PERF_MOVED_MIB=128 node perf/moved-catchup.js
//   PERF_MOVED_ARGS='--objects-cache-bytes 1073741824'   # extra flags for both nodes
//
// Goal: a moved stream's catch-up at least half the local rate. Reports payload MB/s, the ratio to
// local and node CPU per MB; writes the "Catch-up of a moved stream" section of perf/RESULTS.md.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { catchUp, onePass } = require('./lib/reader');
const { http, intEnv, freePorts, sleep } = require('./lib/util');
const { writeResultsSection } = require('./lib/results');
const { startEtcd } = require('../ops/lib/etcd-local');

const PERF_DIR = __dirname;
const START = '<!-- moved-catchup:start -->';
const END = '<!-- moved-catchup:end -->';
const RECORD = 1024;
const PAGE_BYTES = 16 * 1024 * 1024;
const STREAM = 'moved';

async function main() {
  const mib = intEnv('PERF_MOVED_MIB', 512, 8192);
  const duration = intEnv('PERF_DURATION', 5, 60);
  const extra = (process.env.PERF_MOVED_ARGS || '').split(' ').filter(Boolean);
  const records = Math.floor((mib * 1024 * 1024) / RECORD);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'moved-catchup-'));
  const loadBefore = os.loadavg()[0];
  const etcd = await startEtcd(path.join(workDir, 'etcd'), 1);
  const objects = `file:${fs.mkdtempSync(path.join(workDir, 'objects-'))}`;
  const metadata = etcd.url(`perf-moved-${process.pid}`);
  const nodes = [];
  try {
    for (const id of [1, 2]) {
      const [adminPort] = await freePorts(1);
      const args = ['--metadata', metadata, '--objects', objects, '--objects-reads', 'remote', '--node-id', String(id), '--rebalance', 'off', '--admin', '--admin-listen', `127.0.0.1:${adminPort}`, ...extra];
      const n = await startSvc(workDir, { name: `svc-node${id}`, args });
      nodes.push({ ...n, id, adminUrl: `http://127.0.0.1:${adminPort}` });
    }
    await waitLive(nodes, 2);
    // Created on node 1 (placed there: a create lands on the node it is sent to unless told otherwise).
    const owner0 = await create(nodes[0]);
    const from = nodes.find((n) => n.id === owner0);
    const to = nodes.find((n) => n.id !== owner0);
    const t = Date.now();
    await from.preload(STREAM, records, RECORD);
    console.log(`preloaded ${records} records of ${RECORD} B (${mib} MiB) on node ${from.id} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const spec = { proto: from.proto, stream: STREAM, format: 'raw', recordSize: RECORD, expectRecords: records, pageBytes: PAGE_BYTES };
    const local = await catchUp({ ...spec, baseUrl: from.baseUrl, seconds: duration, serverPid: from.pid });
    console.log(`local       ${fmt(local)}`);
    const tMove = Date.now();
    const r = await http('POST', `${from.adminUrl}/admin/transfer`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: `/${STREAM}`, toNode: to.id }) });
    if (r.status !== 200) throw new Error(`transfer → ${r.status} ${r.body.toString()}`);
    await placedOn(to, to.id);
    const moveMs = Date.now() - tMove;
    console.log(`transferred to node ${to.id} in ${moveMs} ms`);
    const cold = await onePass({ ...spec, baseUrl: to.baseUrl, serverPid: to.pid });
    console.log(`moved-cold  ${fmt(cold)}`);
    const warm = await catchUp({ ...spec, baseUrl: to.baseUrl, seconds: duration, serverPid: to.pid });
    console.log(`moved-warm  ${fmt(warm)}`);
    const section = render({ mib, records, duration, extra, moveMs, local, cold, warm, load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
    console.log('\n' + section);
    writeResultsSection(START, END, section, 'Catch-up of a moved stream');
  } finally {
    for (const n of nodes) await n.stop().catch(() => {});
    await etcd.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

const fmt = (x) => `${x.payloadMBps.toFixed(1)} MB/s over ${x.passes} pass(es) in ${x.seconds.toFixed(2)} s, ${Math.round(x.cpuUsPerMB)} µs node CPU per MB`;

/** Create the stream through node `n`, following a redirect; returns its owner's id. */
async function create(n) {
  for (let attempt = 0; ; attempt++) {
    const res = await http('PUT', `${n.baseUrl}/${STREAM}`, { headers: { 'content-type': 'application/octet-stream' } });
    if (res.status === 201) break;
    if (res.status !== 503 || attempt >= 10) throw new Error(`PUT /${STREAM} → ${res.status} ${res.body.toString()}`);
    await sleep(500);
  }
  const d = await detail(n);
  if (typeof d.ownerNodeId !== "number") throw new Error(`no owner in ${JSON.stringify(d)}`);
  return d.ownerNodeId;
}

async function detail(n) {
  const res = await http('GET', `${n.adminUrl}/admin/streams/${STREAM}`);
  if (res.status !== 200) throw new Error(`GET /admin/streams/${STREAM} → ${res.status}`);
  return JSON.parse(res.body.toString());
}

async function placedOn(n, id) {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(20)) {
    const d = await detail(n).catch(() => null);
    if (d !== null && d.state === 'placed' && d.ownerNodeId === id) return;
  }
  throw new Error(`/${STREAM} was not placed on node ${id} within 60 s`);
}

async function waitLive(nodes, count) {
  for (const n of nodes) {
    for (const end = Date.now() + 30_000; ; await sleep(100)) {
      const res = await http('GET', `${n.adminUrl}/admin/nodes`).catch(() => null);
      if (res !== null && res.status === 200 && JSON.parse(res.body.toString()).nodes.filter((d) => d.live).length === count) break;
      if (Date.now() > end) throw new Error(`node ${n.id} did not see ${count} live nodes`);
    }
  }
}

function render({ mib, records, duration, extra, moveMs, local, cold, warm, load }) {
  const row = (side, x, what) => `| ${side} | ${what} | ${x.payloadMBps.toFixed(1)} | ${(x.payloadMBps / local.payloadMBps).toFixed(2)}× | ${x.passes} | ${Math.round(x.cpuUsPerMB)} |`;
  return [
    START,
    '## Catch-up of a moved stream',
    '',
    `W5's shape (${RECORD}-byte records, \`raw\`, one keep-alive reader, pages of ${PAGE_BYTES / 1048576} MiB) on one stream of ${mib} MiB (${records} records), ` +
      'two nodes in objects mode on one `file:` store and one etcd member, both with `--objects-reads remote`: read on the node that took the appends, ' +
      'then transferred to the other node and read there, its records fetched from the object store through the range cache (`--objects-cache-bytes`). ' +
      'Goal: the moved stream at least half the local rate. Written by `node perf/moved-catchup.js`; the machine may have been shared (load below).',
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- ${duration} s of timed passes per side after one untimed verification pass (local, moved-warm); moved-cold is the first pass on the new owner, timed${extra.length > 0 ? `; nodes with \`${extra.join(' ')}\`` : ''}`,
    `- the transfer took ${moveMs} ms from the request to the stream placed on the new owner`,
    '',
    '| side | what | payload MB/s | ÷ local | passes | node CPU per MB (µs) |',
    '|---|---|---|---|---|---|',
    row('local', local, 'the writing node: its own segments'),
    row('moved-cold', cold, 'the new owner, first pass: every range from the object store'),
    row('moved-warm', warm, 'the new owner, later passes: the range cache where it holds the stream'),
    END,
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
