'use strict';
// Two builds of the node side by side on one HTTP append load, rounds alternating A B / B A, a fresh
// node and data directory per run. Prints per run and per build: appends/s (and, with
// `perRequest`, items/s), the node's CPU per append (µs, user + system of all its threads, from
// /proc) and that of its main thread alone (the gateway thread). Used by perf/builds-ab.js (W1) and
// perf/ds-json-ab.js (Durable Streams JSON appends).
//
// PERF_AB_A / PERF_AB_B: build directories (default dist for both: the method's own noise).
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runWrk, haveWrk } = require('./wrk');
const { http, cpuSeconds, intEnv, freePorts, waitForPort } = require('./util');

const ROOT = path.resolve(__dirname, '..', '..');
const WARMUP_S = 2;

/** CPU seconds of the node's main thread alone (the gateway: HTTP parsing and the hop to the shard workers). */
function mainThreadCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ: 100 on Linux
}

async function startNode(dist, workDir, name, serveArgs) {
  const [port, kafkaPort] = await freePorts(2);
  const dataDir = fs.mkdtempSync(path.join(workDir, `${name}-data-`));
  const fd = fs.openSync(path.join(workDir, `${name}.log`), 'a');
  const args = [path.join(dist, 'main.js'), 'serve', ...serveArgs, '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn'];
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

/**
 * Run the comparison. `o`:
 *   name             work directory prefix
 *   describe         text for the first line (what the load is)
 *   serveArgs        extra `svc serve` flags (e.g. ['--protocol', 'ds'])
 *   writeBody(dir)   writes the request body, returns its path
 *   path             the stream's path on the listener; contentType, connections
 *   perRequest       items per append for an items/s column (omit for none)
 *   check(url)       optional, after each run: throws if what was stored is wrong
 */
async function compareBuilds(o) {
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
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', `${o.name}-`));
  const body = o.writeBody(workDir);
  const items = o.perRequest === undefined ? null : o.perRequest;
  const sums = { A: { req: 0, s: 0, cpu: 0, main: 0 }, B: { req: 0, s: 0, cpu: 0, main: 0 } };
  const row = (label, id, req, s, cpu, main) =>
    `| ${label} | ${id} | ${Math.round(req / s)} |${items === null ? '' : ` ${Math.round((req * items) / s)} |`} ${((cpu * 1e6) / req).toFixed(1)} | ${((main * 1e6) / req).toFixed(1)} |`;
  console.log(`A = ${path.relative(ROOT, builds[0].dist)}, B = ${path.relative(ROOT, builds[1].dist)}; ${o.describe}; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log(`| round | build | appends/s |${items === null ? '' : ' items/s |'} node CPU µs per append | main thread CPU µs per append |\n|---|---|---|${items === null ? '' : '---|'}---|---|`);
  let live = null;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        live = await startNode(b.dist, workDir, `node-${b.id}`, o.serveArgs ?? []);
        const url = `${live.base}${o.path}`;
        const res = await http('PUT', url, { headers: { 'content-type': o.contentType } });
        if (res.status !== 201) throw new Error(`PUT ${o.path} on build ${b.id} → ${res.status}`);
        const load = { url, script: 'append.lua', args: [body, o.contentType, ''], connections: o.connections };
        await runWrk({ ...load, seconds: WARMUP_S });
        const cpu0 = cpuSeconds(live.pid);
        const main0 = mainThreadCpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: duration });
        const cpu = cpuSeconds(live.pid) - cpu0;
        const mainCpu = mainThreadCpuSeconds(live.pid) - main0;
        if (o.check !== undefined) await o.check(url, b.id);
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (bad > 0) throw new Error(`build ${b.id}: ${bad} non-2xx answers`);
        const s = sums[b.id];
        s.req += w.requests;
        s.s += w.seconds;
        s.cpu += cpu;
        s.main += mainCpu;
        console.log(row(r + 1, b.id, w.requests, w.seconds, cpu, mainCpu));
      }
    }
    for (const id of ['A', 'B']) {
      const s = sums[id];
      console.log(row('all', id, s.req, s.s, s.cpu, s.main));
    }
    console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    if (live !== null) await live.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

module.exports = { compareBuilds };
