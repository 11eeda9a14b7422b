'use strict';
// Micro-benchmark of what the metrics add to one HTTP request on the gateway thread: the
// metered wrapper (gateway/metrics/metered.ts) around a handler that answers at once, against
// the bare handler. Reports nanoseconds per request (best of 5 passes of 2M requests), the
// figure to hold against the node's CPU per append (perf/metrics-overhead.js).
// Usage: node perf/micro/metrics-request.js [distDir=dist]
const path = require('node:path');

const dist = path.resolve(__dirname, '..', '..', process.argv[2] ?? 'dist');
const { NodeMetrics, metered } = require(path.join(dist, 'gateway', 'metrics'));

const res = { aborted: false, sent: false, onAborted() {}, send() {}, writeHead() {}, write: () => true, onWritable() {}, end() {}, destroy() {} };
const req = { method: 'POST', path: '/w1', query: '', headers: {}, body: Buffer.alloc(0) };
const bare = (_req, r) => r.send(204, [], '');
const wrapped = metered('svc', new NodeMetrics(), bare);
const N = 2_000_000;

function pass(fn) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(req, res);
  return Number(process.hrtime.bigint() - t) / N;
}

let best = { bare: Infinity, metered: Infinity };
for (let k = 0; k < 5; k++) {
  best = { bare: Math.min(best.bare, pass(bare)), metered: Math.min(best.metered, pass(wrapped)) };
}
console.log(`bare handler ${best.bare.toFixed(1)} ns/request, metered ${best.metered.toFixed(1)} ns/request: metrics add ${(best.metered - best.bare).toFixed(1)} ns per request`);
