#!/usr/bin/env node
'use strict';
// Two builds side by side on Durable Streams JSON appends: POSTs of one JSON array of
// PERF_DS_ELEMENTS (default 100) objects of about PERF_DS_ELEMENT_BYTES (default 100) bytes each to
// one `application/json` stream of a `--protocol ds` node (wrk -t1, PERF_DS_CONNECTIONS, default 16),
// a fresh node per measured run, alternating A B, B A, … so drift in the machine's load falls on both.
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/ds-json-ab.js
//
// PERF_DS_SPACED=1 sends the array pretty-printed (whitespace between tokens) instead of compact.
// Prints per run and per build: appends/s, messages/s, the node's CPU per append (µs, user + system
// of all its threads, from /proc) and that of its main thread alone (the gateway thread).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runWrk, haveWrk } = require('./lib/wrk');
const { http, cpuSeconds, intEnv, freePorts, waitForPort } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');
const WARMUP_S = 2;

function mainThreadCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ: 100 on Linux
}

/** A JSON array of `n` objects of about `bytes` bytes each (compact, or pretty-printed). */
function arrayBody(n, bytes, spaced) {
  const items = [];
  for (let i = 0; i < n; i++) {
    const head = { id: i, kind: 'order', ok: true, pad: '' };
    const pad = Math.max(0, bytes - JSON.stringify(head).length);
    items.push({ ...head, pad: 'x'.repeat(pad) });
  }
  return spaced ? JSON.stringify(items, null, 2) : JSON.stringify(items);
}

async function startNode(dist, workDir, name) {
  const [port] = await freePorts(1);
  const dataDir = fs.mkdtempSync(path.join(workDir, `${name}-data-`));
  const fd = fs.openSync(path.join(workDir, `${name}.log`), 'a');
  const args = [path.join(dist, 'main.js'), 'serve', '--protocol', 'ds', '--listen', `127.0.0.1:${port}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn'];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited = false;
  const exit = new Promise((resolve) => child.once('exit', () => ((exited = true), resolve())));
  await waitForPort(port, { timeoutMs: 60000, isDead: () => exited });
  return {
    pid: child.pid,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await exit;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const builds = [
    { id: 'A', dist: path.resolve(ROOT, process.env.PERF_AB_A || 'dist') },
    { id: 'B', dist: path.resolve(ROOT, process.env.PERF_AB_B || 'dist') },
  ];
  const rounds = intEnv('PERF_AB_ROUNDS', 3, 20);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const elements = intEnv('PERF_DS_ELEMENTS', 100, 100000);
  const elementBytes = intEnv('PERF_DS_ELEMENT_BYTES', 100, 1000000);
  const connections = intEnv('PERF_DS_CONNECTIONS', 16, 256);
  const spaced = process.env.PERF_DS_SPACED === '1';
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'ds-json-ab-'));
  const body = path.join(workDir, 'array.json');
  const text = arrayBody(elements, elementBytes, spaced);
  fs.writeFileSync(body, text);
  const sums = { A: { req: 0, s: 0, cpu: 0, main: 0 }, B: { req: 0, s: 0, cpu: 0, main: 0 } };
  console.log(`A = ${path.relative(ROOT, builds[0].dist)}, B = ${path.relative(ROOT, builds[1].dist)}; ${elements} × ~${elementBytes} B elements, body ${text.length} B${spaced ? ' (pretty-printed)' : ''}, ${connections} connections; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log('| round | build | appends/s | messages/s | node CPU µs per append | main thread CPU µs per append |\n|---|---|---|---|---|---|');
  let live = null;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        live = await startNode(b.dist, workDir, `node-${b.id}`);
        const url = `${live.base}/v1/stream/ab`;
        const res = await http('PUT', url, { headers: { 'content-type': 'application/json' } });
        if (res.status !== 201) throw new Error(`PUT on build ${b.id} → ${res.status}`);
        const load = { url, script: 'append.lua', args: [body, 'application/json', ''], connections };
        await runWrk({ ...load, seconds: WARMUP_S });
        const cpu0 = cpuSeconds(live.pid);
        const main0 = mainThreadCpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: duration });
        const cpu = cpuSeconds(live.pid) - cpu0;
        const mainCpu = mainThreadCpuSeconds(live.pid) - main0;
        // What was stored: the first message as a reader gets it.
        const read = await http('GET', `${url}?offset=-1`);
        const first = JSON.parse(read.body.toString())[0];
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (bad > 0) throw new Error(`build ${b.id}: ${bad} non-2xx answers`);
        if (JSON.stringify(first) !== JSON.stringify(JSON.parse(text)[0])) throw new Error(`build ${b.id}: the first message reads back as ${JSON.stringify(first)}`);
        sums[b.id].req += w.requests;
        sums[b.id].s += w.seconds;
        sums[b.id].cpu += cpu;
        sums[b.id].main += mainCpu;
        console.log(`| ${r + 1} | ${b.id} | ${Math.round(w.requests / w.seconds)} | ${Math.round((w.requests * elements) / w.seconds)} | ${((cpu * 1e6) / w.requests).toFixed(1)} | ${((mainCpu * 1e6) / w.requests).toFixed(1)} |`);
      }
    }
    for (const id of ['A', 'B']) {
      const s = sums[id];
      console.log(`| all | ${id} | ${Math.round(s.req / s.s)} | ${Math.round((s.req * elements) / s.s)} | ${((s.cpu * 1e6) / s.req).toFixed(1)} | ${((s.main * 1e6) / s.req).toFixed(1)} |`);
    }
    console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    if (live !== null) await live.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
