#!/usr/bin/env node
'use strict';
// What Prometheus metrics cost on the hot path: single-record appends (the W1 load) against two
// Svc nodes from the same build, one with metrics on (the default; served on --metrics-listen and
// scraped every PERF_METRICS_SCRAPE_MS, like a Prometheus would) and one with `--no-metrics`.
//
//   node perf/metrics-overhead.js     # PERF_METRICS_ROUNDS (default 4) × PERF_DURATION (default 5 s) per node
//
// Each measured run gets a fresh node (started, warmed up for 2 s, measured, stopped), alternating
// on/off, off/on, … so drift in the machine's load falls on both sides. PERF_METRICS_CONTROL=1
// runs both sides with metrics on: the ratio it prints is the method's noise. The result is
// on ÷ off on the summed appends per second (goal ≥ 0.97) and on the node CPU per append.
// Prints a Markdown table; perf/RESULTS.md is left alone (docs/metrics.md keeps the figures).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, intEnv, freePort } = require('./lib/util');

const PERF_DIR = __dirname;
const RECORD = 100;
const WARMUP_S = 2;




async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_METRICS_ROUNDS', 4, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const scrapeMs = intEnv('PERF_METRICS_SCRAPE_MS', 5000, 60_000);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'metrics-'));
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, RECORD));
  const loadBefore = os.loadavg()[0];
  const control = process.env.PERF_METRICS_CONTROL === '1';
  const modes = [
    { id: 'on', metrics: true },
    { id: 'off', metrics: control },
  ];
  let live = null;
  let scraper = null;
  try {
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const m of order) {
        const metricsPort = m.metrics ? await freePort() : null;
        live = await startSvc(workDir, { name: `svc-metrics-${m.id}`, args: m.metrics ? ['--metrics-listen', `127.0.0.1:${metricsPort}`] : ['--no-metrics'] });
        const headers = { 'content-type': 'application/octet-stream' };
        const res = await http('PUT', `${live.baseUrl}/w1`, { headers });
        if (res.status !== 201) throw new Error(`PUT /w1 on the metrics ${m.id} node → ${res.status} ${res.body.toString()}`);
        const load = { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, 'application/octet-stream', ''], connections };
        await runWrk({ ...load, seconds: WARMUP_S });
        let scrapes = 0;
        if (metricsPort !== null) {
          scraper = setInterval(() => {
            http('GET', `http://127.0.0.1:${metricsPort}/metrics`).then((s) => {
              if (s.status === 200) scrapes++;
            }, () => {});
          }, scrapeMs);
        }
        const cpuBefore = cpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: duration });
        const cpu = cpuSeconds(live.pid) - cpuBefore;
        clearInterval(scraper);
        scraper = null;
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (bad > 0) throw new Error(`metrics ${m.id}: ${bad} non-2xx answers in round ${r + 1}`);
        const rps = w.requests / w.seconds;
        const cpuUs = (cpu / w.requests) * 1e6;
        runs.push({ round: r + 1, mode: m.id, rps, p99: w.latency.p99, cpuUs });
        console.log(`round ${r + 1} metrics ${m.id.padEnd(3)} ${Math.round(rps)} appends/s, p99 ${(w.latency.p99 / 1000).toFixed(2)} ms, ${cpuUs.toFixed(1)} µs node CPU per append, ${scrapes} scrapes`);
      }
    }
    const sum = (id, k) => runs.filter((x) => x.mode === id).reduce((a, x) => a + x[k], 0);
    const on = { rps: sum('on', 'rps'), cpu: sum('on', 'cpuUs') };
    const off = { rps: sum('off', 'rps'), cpu: sum('off', 'cpuUs') };
    console.log(
      [
        '',
        `| | metrics on | metrics off (--no-metrics) | on ÷ off |`,
        `|---|---|---|---|`,
        `| appends/s (sum of ${rounds} runs) | ${Math.round(on.rps)} | ${Math.round(off.rps)} | ${(on.rps / off.rps).toFixed(3)} |`,
        `| node CPU per append (µs, mean) | ${(on.cpu / rounds).toFixed(1)} | ${(off.cpu / rounds).toFixed(1)} | ${(on.cpu / off.cpu).toFixed(3)} |`,
        '',
        `${rounds} rounds × ${duration} s per side, wrk -t1 -c${connections}, 100 B records, scrape every ${scrapeMs} ms${control ? ' (control: metrics on both sides)' : ''}; ` +
          `load ${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end; ${os.cpus().length} cores, node ${process.version}`,
      ].join('\n'),
    );
  } finally {
    if (scraper !== null) clearInterval(scraper);
    if (live !== null) await live.stop().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
