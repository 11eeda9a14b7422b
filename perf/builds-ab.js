#!/usr/bin/env node
'use strict';
// Two builds side by side on W1's load: single-record 100 B appends to one stream (wrk -t1 -c64),
// a fresh node per measured run, alternating A B, B A, … so drift in the machine's load falls on both.
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/builds-ab.js
//
// PERF_AB_A / PERF_AB_B: build directories (default dist for both: the method's own noise).
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build. Prints per run and per build:
// appends/s and the node's CPU per append (µs, user + system of all its threads, from /proc), and
// that of its main thread alone (the gateway thread).
// For a before/after of a change: copy dist/ of the old commit to perf/.work/ before building the new one.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, intEnv, freePorts, waitForPort } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');
const RECORD = 100;

/** CPU seconds of the node's main thread alone (the gateway: HTTP parsing and the hop to the shard workers). */
function mainThreadCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ: 100 on Linux
}
const WARMUP_S = 2;

async function startNode(dist, workDir, name) {
  const [port, kafkaPort] = await freePorts(2);
  const dataDir = fs.mkdtempSync(path.join(workDir, `${name}-data-`));
  const fd = fs.openSync(path.join(workDir, `${name}.log`), 'a');
  const args = [path.join(dist, 'main.js'), 'serve', '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn'];
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
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'ab-'));
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, RECORD));
  const sums = { A: { req: 0, s: 0, cpu: 0, main: 0 }, B: { req: 0, s: 0, cpu: 0, main: 0 } };
  console.log(`A = ${path.relative(ROOT, builds[0].dist)}, B = ${path.relative(ROOT, builds[1].dist)}; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log('| round | build | appends/s | node CPU µs per append | main thread CPU µs per append |\n|---|---|---|---|---|');
  let live = null;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        live = await startNode(b.dist, workDir, `node-${b.id}`);
        const res = await http('PUT', `${live.base}/w1`, { headers: { 'content-type': 'application/octet-stream' } });
        if (res.status !== 201) throw new Error(`PUT /w1 on build ${b.id} → ${res.status}`);
        const load = { url: `${live.base}/w1`, script: 'append.lua', args: [body, 'application/octet-stream', ''], connections: 64 };
        await runWrk({ ...load, seconds: WARMUP_S });
        const cpu0 = cpuSeconds(live.pid);
        const main0 = mainThreadCpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: duration });
        const cpu = cpuSeconds(live.pid) - cpu0;
        const mainCpu = mainThreadCpuSeconds(live.pid) - main0;
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (bad > 0) throw new Error(`build ${b.id}: ${bad} non-2xx answers`);
        sums[b.id].req += w.requests;
        sums[b.id].s += w.seconds;
        sums[b.id].cpu += cpu;
        sums[b.id].main += mainCpu;
        console.log(`| ${r + 1} | ${b.id} | ${Math.round(w.requests / w.seconds)} | ${((cpu * 1e6) / w.requests).toFixed(1)} | ${((mainCpu * 1e6) / w.requests).toFixed(1)} |`);
      }
    }
    for (const id of ['A', 'B']) {
      const s = sums[id];
      console.log(`| all | ${id} | ${Math.round(s.req / s.s)} | ${((s.cpu * 1e6) / s.req).toFixed(1)} | ${((s.main * 1e6) / s.req).toFixed(1)} |`);
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
