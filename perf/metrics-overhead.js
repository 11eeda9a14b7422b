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
const { recordBody } = require('./lib/bodies');
const { http, intEnv, freePort } = require('./lib/util');
const { pairedRuns } = require('./lib/builds-ab');

const RECORD = 100;

async function main() {
  const rounds = intEnv('PERF_METRICS_ROUNDS', 4, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const scrapeMs = intEnv('PERF_METRICS_SCRAPE_MS', 5000, 60_000);
  const loadBefore = os.loadavg()[0];
  const control = process.env.PERF_METRICS_CONTROL === '1';
  /** Metrics on a listener of their own, scraped every scrapeMs while the load runs, like a Prometheus would. */
  const metricsOn = async () => {
    const port = await freePort();
    return {
      args: ['--metrics-listen', `127.0.0.1:${port}`],
      during() {
        let scrapes = 0;
        const timer = setInterval(() => {
          http('GET', `http://127.0.0.1:${port}/metrics`).then((s) => {
            if (s.status === 200) scrapes++;
          }, () => {});
        }, scrapeMs);
        return () => (clearInterval(timer), scrapes);
      },
    };
  };
  const runs = await pairedRuns({
    name: 'metrics',
    variants: [
      { id: 'on', setup: metricsOn },
      { id: 'off', setup: control ? metricsOn : async () => ({ args: ['--no-metrics'] }) },
    ],
    rounds,
    duration,
    connections,
    writeBody(dir) {
      const file = path.join(dir, `record-${RECORD}.bin`);
      fs.writeFileSync(file, recordBody(0, RECORD));
      return file;
    },
    path: '/w1',
    contentType: 'application/octet-stream',
    onRun: (x) => console.log(`round ${x.round} metrics ${x.id.padEnd(3)} ${Math.round(x.rps)} appends/s, p99 ${(x.p99 / 1000).toFixed(2)} ms, ${x.cpuUs.toFixed(1)} µs node CPU per append, ${x.extra ?? 0} scrapes`),
  });
  const sum = (id, k) => runs.filter((x) => x.id === id).reduce((a, x) => a + x[k], 0);
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
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
