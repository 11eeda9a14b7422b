'use strict';
// Micro-benchmark of what request ids cost one HTTP request on the gateway thread: the request-log
// wrapper (gateway/request-log.ts) around a handler that answers at once, against the bare
// handler, for a success (no id, no log line: the hot path) and for a 404 (an id, one log line,
// written to a logger that drops it). Nanoseconds per request, best of 5 passes.
// Usage: node perf/micro/request-log.js [distDir=dist]
const path = require('node:path');

const dist = path.resolve(__dirname, '..', '..', process.argv[2] ?? 'dist');
const { requestLog } = require(path.join(dist, 'gateway', 'request-log'));

const res = { aborted: false, sent: false, onAborted() {}, send() {}, writeHead() {}, write: () => true, onWritable() {}, end() {}, destroy() {} };
const req = { method: 'POST', path: '/w1', query: '', headers: {}, body: Buffer.alloc(0) };
const JSON_TYPE = [['content-type', 'application/json']];
const ok = (_req, r) => r.send(200, JSON_TYPE, '{}');
const missing = (_req, r) => r.send(404, JSON_TYPE, '{"error":"not_found","message":"no stream /w1"}');
const drop = { info() {}, warn() {} };

function pass(fn, n) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(req, res);
  return Number(process.hrtime.bigint() - t) / n;
}

function best(fn, n) {
  let b = Infinity;
  for (let k = 0; k < 5; k++) b = Math.min(b, pass(fn, n));
  return b;
}

const bare = best(ok, 2_000_000);
const success = best(requestLog('svc', drop, ok), 2_000_000);
const error = best(requestLog('svc', drop, missing), 200_000);
console.log(`bare handler ${bare.toFixed(1)} ns/request; with request ids: a success ${success.toFixed(1)} ns (+${(success - bare).toFixed(1)}), an error reply ${error.toFixed(1)} ns (id, header, log fields; the log write itself not included)`);
