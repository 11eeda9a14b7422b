'use strict';
// Paired runs on one HTTP append load: two (or more) node variants, measured in turn, the order
// reversed every round (A B / B A / …) so drift in the machine's load falls on every side, a fresh
// node and data directory per run. A variant is a build directory and/or `svc serve` flags, an
// Authorization header for the load, and work to run beside the load (a scraper). Each run reports
// appends/s, p99, the node's CPU per append (µs, user + system of all its threads, from /proc) and
// that of its main thread alone (the gateway thread).
//
// Used by perf/builds-ab.js (two builds on W1), perf/ds-json-ab.js (two builds on DS JSON appends),
// perf/refusals-ab.js (two builds on refused GETs),
// perf/auth-overhead.js (auth off / required) and perf/metrics-overhead.js (metrics on / off).
// compareBuilds: PERF_AB_A / PERF_AB_B build directories (default dist for both: the method's own
// noise), PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runWrk, haveWrk } = require('./wrk');
const { http, cpuSeconds, intEnv, freePorts, sleep, waitForPort } = require('./util');
const { recordBody } = require('./bodies');

const ROOT = path.resolve(__dirname, '..', '..');
const WARMUP_S = 2;

/** CPU seconds of the node's main thread alone (the gateway: HTTP parsing and the hop to the shard workers). */
function mainThreadCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ: 100 on Linux
}

async function startNode(dist, workDir, name, serveArgs, nodeBin = process.execPath) {
  const [port, kafkaPort] = await freePorts(2);
  const dataDir = fs.mkdtempSync(path.join(workDir, `${name}-data-`));
  const fd = fs.openSync(path.join(workDir, `${name}.log`), 'a');
  // PERF_SVC_NODE_FLAGS: Node/V8 flags for the node under test (as perf/lib/servers.js).
  const flags = (process.env.PERF_SVC_NODE_FLAGS || '').split(/\s+/).filter(Boolean);
  const args = [...flags, path.join(dist, 'main.js'), 'serve', ...serveArgs, '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn'];
  const child = spawn(nodeBin, args, { cwd: ROOT, stdio: ['ignore', fd, fd] });
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
 * Measure `o.variants` in alternating order for `o.rounds` rounds. `o`:
 *   name             work directory prefix (under perf/.work)
 *   variants         [{id, setup?}]; setup() → {dist?, args?, auth?, during?, node?} per run, where
 *                    node is the Node.js binary the node runs on (default: this script's), and
 *                    during(live) starts work beside the measured load and returns a function that
 *                    stops it and returns what it counted (kept as the run's `extra`)
 *   rounds, duration (s), connections
 *   writeBody(dir)   writes the request body, returns its path
 *   path             the stream's path on the listener; contentType
 *   check(url, id)   optional, after each run: throws if what was stored is wrong
 *   prepare(base, headers)  optional: makes the streams the load writes to (default: PUT o.path)
 *   script, scriptArgs(body)  optional: another wrk script in perf/wrk/ and its arguments
 *                    (default: append.lua with the body, the content type and the auth header)
 *   refused          optional: every request of the load is to be refused (4xx/5xx), not answered 2xx
 *   onRun(run)       optional, called with each run as it ends
 *   afterS           optional: keep each node this many seconds after its load and count its CPU
 *                    then too (`cpuAfterUs`: what the run left behind, e.g. objects mode's
 *                    compaction and reaper, charged to the run's appends)
 * Resolves with every run: {round, id, requests, seconds, rps, p99 (µs), cpuUs, mainUs, extra, cpuAfterUs}.
 */
async function pairedRuns(o) {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', `${o.name}-`));
  const body = o.writeBody(workDir);
  const runs = [];
  let live = null;
  let stopDuring = null;
  try {
    for (let r = 0; r < o.rounds; r++) {
      for (const v of r % 2 === 0 ? o.variants : [...o.variants].reverse()) {
        const s = v.setup === undefined ? {} : await v.setup();
        live = await startNode(path.resolve(ROOT, s.dist || 'dist'), workDir, `node-${v.id}`, s.args || [], s.node);
        const url = `${live.base}${o.path}`;
        const headers = { 'content-type': o.contentType, ...(s.auth ? { authorization: s.auth } : {}) };
        if (o.prepare !== undefined) await o.prepare(live.base, headers);
        else {
          const res = await http('PUT', url, { headers });
          if (res.status !== 201) throw new Error(`PUT ${o.path} on ${v.id} → ${res.status} ${res.body.toString()}`);
        }
        const load = o.script === undefined ? { url, script: 'append.lua', args: [body, o.contentType, s.auth || ''], connections: o.connections } : { url: live.base, script: o.script, args: o.scriptArgs(body), connections: o.connections };
        await runWrk({ ...load, seconds: o.warmupS ?? WARMUP_S }); // discarded: JIT, first segment
        stopDuring = s.during ? s.during(live) : null;
        const cpu0 = cpuSeconds(live.pid);
        const main0 = mainThreadCpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: o.duration });
        const cpu = cpuSeconds(live.pid) - cpu0;
        const mainCpu = mainThreadCpuSeconds(live.pid) - main0;
        const extra = stopDuring ? stopDuring() : null;
        stopDuring = null;
        let cpuAfterUs = null;
        if (o.afterS > 0) {
          await sleep(o.afterS * 1000);
          cpuAfterUs = ((cpuSeconds(live.pid) - cpu0) / w.requests) * 1e6;
        }
        if (o.check !== undefined) await o.check(url, v.id);
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (o.refused === true && bad !== w.requests) throw new Error(`${v.id}: ${w.requests - bad} of ${w.requests} requests not refused in round ${r + 1}`);
        if (o.refused !== true && bad > 0) throw new Error(`${v.id}: ${bad} non-2xx answers in round ${r + 1}`);
        const run = { round: r + 1, id: v.id, requests: w.requests, seconds: w.seconds, rps: w.requests / w.seconds, p99: w.latency.p99, cpuUs: (cpu / w.requests) * 1e6, mainUs: (mainCpu / w.requests) * 1e6, extra, cpuAfterUs };
        runs.push(run);
        if (o.onRun) o.onRun(run);
      }
    }
    return runs;
  } finally {
    if (stopDuring) stopDuring();
    if (live !== null) await live.stop().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * Two builds (PERF_AB_A, PERF_AB_B) on one load, printed as a Markdown table: per run and over all
 * runs. `o` as pairedRuns (without variants, rounds and duration) plus `describe` (the load, for the
 * first line), `perRequest` (items per append, for an items/s column) and `unit` (what one request
 * is called in the columns; default 'append').
 */
async function compareBuilds(o) {
  const unit = o.unit || 'append';
  const builds = [
    { id: 'A', dist: process.env.PERF_AB_A || 'dist' },
    { id: 'B', dist: process.env.PERF_AB_B || 'dist' },
  ];
  const items = o.perRequest === undefined ? null : o.perRequest;
  const row = (label, id, req, s, cpuUs, mainUs) =>
    `| ${label} | ${id} | ${Math.round(req / s)} |${items === null ? '' : ` ${Math.round((req * items) / s)} |`} ${cpuUs.toFixed(1)} | ${mainUs.toFixed(1)} |`;
  console.log(`A = ${builds[0].dist}, B = ${builds[1].dist}; ${o.describe}; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log(`| round | build | ${unit}s/s |${items === null ? '' : ' items/s |'} node CPU µs per ${unit} | main thread CPU µs per ${unit} |\n|---|---|---|${items === null ? '' : '---|'}---|---|`);
  const runs = await pairedRuns({
    ...o,
    variants: builds.map((b) => ({ id: b.id, setup: async () => ({ dist: b.dist, args: o.serveArgs }) })),
    rounds: intEnv('PERF_AB_ROUNDS', 3, 20),
    duration: intEnv('PERF_DURATION', 5, 10),
    onRun: (x) => console.log(row(x.round, x.id, x.requests, x.seconds, x.cpuUs, x.mainUs)),
  });
  for (const b of builds) {
    const mine = runs.filter((x) => x.id === b.id);
    const req = mine.reduce((a, x) => a + x.requests, 0);
    const sum = (k) => mine.reduce((a, x) => a + x[k] * x.requests, 0) / req;
    console.log(row('all', b.id, req, mine.reduce((a, x) => a + x.seconds, 0), sum('cpuUs'), sum('mainUs')));
  }
  console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
}

/** W1's request: one 100-byte record appended to /w1 (the load of builds-ab, auth-overhead and metrics-overhead). */
const W1_RECORD = 100;
const W1_LOAD = {
  writeBody(dir) {
    const file = path.join(dir, `record-${W1_RECORD}.bin`);
    fs.writeFileSync(file, recordBody(0, W1_RECORD));
    return file;
  },
  path: '/w1',
  contentType: 'application/octet-stream',
};

module.exports = { pairedRuns, compareBuilds, startNode, mainThreadCpuSeconds, W1_LOAD, W1_RECORD };
