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
//
// PERF_OVERHEAD=traces measures OpenTelemetry traces the same way: both sides keep metrics (the
// default), one exports traces (--otlp-traces-endpoint, sample ratio PERF_TRACES_RATIO, default 1:
// every request) to a receiver in this process that reads and discards each OTLP request, the
// other has traces off (the default). PERF_METRICS_CONTROL=1: traces on both sides.

const os = require('node:os');
const { http, intEnv, freePort } = require('./lib/util');
const { pairedRuns, W1_LOAD } = require('./lib/builds-ab');


/** An OTLP/HTTP receiver that reads each export request, counts it and answers 200 `{}`, as a collector would. */
function discardingReceiver() {
  const server = require('node:http').createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      server.requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.requests = 0;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const rounds = intEnv('PERF_METRICS_ROUNDS', 4, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const scrapeMs = intEnv('PERF_METRICS_SCRAPE_MS', 5000, 60_000);
  const loadBefore = os.loadavg()[0];
  const control = process.env.PERF_METRICS_CONTROL === '1';
  const what = process.env.PERF_OVERHEAD === 'traces' ? 'traces' : 'metrics';
  const ratio = process.env.PERF_TRACES_RATIO ?? '1';
  const receiver = what === 'traces' ? await discardingReceiver() : null;
  /** Traces on, to the discarding receiver; `during` counts the export requests it got. */
  const tracesOn = async () => ({
    args: ['--otlp-traces-endpoint', `http://127.0.0.1:${receiver.address().port}/v1/traces`, '--otlp-traces-sample-ratio', ratio],
    during() {
      const before = receiver.requests;
      return () => receiver.requests - before;
    },
  });
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
    name: what,
    variants:
      what === 'traces'
        ? [
            { id: 'on', setup: tracesOn },
            { id: 'off', setup: control ? tracesOn : async () => ({ args: [] }) },
          ]
        : [
            { id: 'on', setup: metricsOn },
            { id: 'off', setup: control ? metricsOn : async () => ({ args: ['--no-metrics'] }) },
          ],
    rounds,
    duration,
    connections,
    ...W1_LOAD,
    onRun: (x) =>
      console.log(
        `round ${x.round} ${what} ${x.id.padEnd(3)} ${Math.round(x.rps)} appends/s, p99 ${(x.p99 / 1000).toFixed(2)} ms, ${x.cpuUs.toFixed(1)} µs node CPU per append, ${x.extra ?? 0} ${what === 'traces' ? 'OTLP exports' : 'scrapes'}`,
      ),
  });
  const sum = (id, k) => runs.filter((x) => x.id === id).reduce((a, x) => a + x[k], 0);
  const on = { rps: sum('on', 'rps'), cpu: sum('on', 'cpuUs') };
  const off = { rps: sum('off', 'rps'), cpu: sum('off', 'cpuUs') };
  console.log(
    [
      '',
      what === 'traces' ? `| | traces on (ratio ${ratio}) | traces off (default) | on ÷ off |` : `| | metrics on | metrics off (--no-metrics) | on ÷ off |`,
      `|---|---|---|---|`,
      `| appends/s (sum of ${rounds} runs) | ${Math.round(on.rps)} | ${Math.round(off.rps)} | ${(on.rps / off.rps).toFixed(3)} |`,
      `| node CPU per append (µs, mean) | ${(on.cpu / rounds).toFixed(1)} | ${(off.cpu / rounds).toFixed(1)} | ${(on.cpu / off.cpu).toFixed(3)} |`,
      '',
      `${rounds} rounds × ${duration} s per side, wrk -t1 -c${connections}, 100 B records, ` +
        (what === 'traces' ? `metrics on both sides, OTLP/HTTP JSON to a discarding receiver${control ? ' (control: traces on both sides)' : ''}; ` : `scrape every ${scrapeMs} ms${control ? ' (control: metrics on both sides)' : ''}; `) +
        `load ${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end; ${os.cpus().length} cores, node ${process.version}`,
    ].join('\n'),
  );
  receiver?.close();
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
