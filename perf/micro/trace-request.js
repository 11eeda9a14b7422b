'use strict';
// Micro-benchmark of what OpenTelemetry traces add to one HTTP append on the node's main thread:
// the traced layer (gateway/metrics/traced.ts) with its request span, the AsyncLocalStorage scope
// and a shard append span, plus the batch export (OTLP/HTTP JSON) to a receiver in a child process
// that discards what it gets. Against the bare handler. Requests run in chunks of 500 with a turn
// of the event loop between chunks, so the exporter's timers and sockets run as in a node; the
// figure is this process's CPU (user + system) per request, best of 3 passes of 100k requests.
// Spans the exporter cannot keep up with are dropped (a queue of 2,048), as in a node.
// Usage: node perf/micro/trace-request.js [distDir=dist]
const path = require('node:path');
const { spawn } = require('node:child_process');

const dist = path.resolve(__dirname, '..', '..', process.argv[2] ?? 'dist');
const { traced } = require(path.join(dist, 'gateway', 'metrics'));
const { Tracing } = require(path.join(dist, 'tracing'));

const RECEIVER = `
const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/json' }).end('{}')); });
s.listen(0, '127.0.0.1', () => process.send(s.address().port));`;

const res = { aborted: false, sent: false, onAborted() {}, send() {}, writeHead() {}, write: () => true, onWritable() {}, end() {}, destroy() {} };
const req = { method: 'POST', path: '/w1', query: '', headers: {}, body: Buffer.alloc(100) };
const N = 100_000;
const CHUNK = 500;
const quiet = { info() {}, warn() {} };

/** A handler that makes the shard call's hop span (when traces are on) and answers. */
const handlerFor = (tracing) => (_req, r) => {
  const end = tracing === null ? null : tracing.start('append', '/w1', 0, 0);
  if (end !== null) end(1, 100, null);
  r.send(204, [], '');
};

async function pass(fn) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i += CHUNK) {
    for (let k = 0; k < CHUNK; k++) fn(req, res);
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Let the last batch go out.
  await new Promise((resolve) => setTimeout(resolve, 1200));
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / N; // ns per request
}

async function main() {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => child.once('message', resolve));
  const endpoint = `http://127.0.0.1:${port}/v1/traces`;
  const bare = handlerFor(null);
  const sides = { bare };
  const tracings = [];
  for (const ratio of [1, 0.01]) {
    const t = new Tracing({ endpoint, sampleRatio: ratio, serviceName: 'bench', nodeId: 1 }, quiet);
    tracings.push(t);
    sides[`traced, ratio ${ratio}`] = traced('svc', t, handlerFor(t));
  }
  const best = {};
  for (let k = 0; k < 3; k++) for (const [name, fn] of Object.entries(sides)) best[name] = Math.min(best[name] ?? Infinity, await pass(fn));
  for (const [name, ns] of Object.entries(best)) console.log(`${name.padEnd(18)} ${(ns / 1000).toFixed(2)} µs CPU per request${name === 'bare' ? '' : `: traces add ${((ns - best.bare) / 1000).toFixed(2)} µs`}`);
  await Promise.all(tracings.map((t) => t.close()));
  child.kill();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
