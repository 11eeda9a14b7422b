'use strict';
// Small helpers shared by the perf orchestrator: ports, waiting, plain HTTP calls.

const net = require('node:net');
const { request } = require('undici');

/** A free TCP port on 127.0.0.1 (bound then released; the caller binds it next). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolve once 127.0.0.1:port accepts a TCP connection; reject after `timeoutMs` or if `isDead()` turns true. */
async function waitForPort(port, { timeoutMs = 15000, isDead = () => false } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (isDead()) throw new Error('process exited before its port opened');
    const ok = await new Promise((resolve) => {
      const sock = net.connect({ host: '127.0.0.1', port });
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * One HTTP request, body read in full. Returns {status, headers, body}.
 * No Accept-Encoding is sent, so no server compresses its answer.
 */
async function http(method, url, { headers = {}, body } = {}) {
  const res = await request(url, { method, headers, body, headersTimeout: 60000, bodyTimeout: 60000 });
  const buf = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body: buf };
}

/** Run `fn(i)` for i in [0, n) with at most `limit` in flight. */
async function parallel(n, limit, fn) {
  let next = 0;
  const workers = [];
  for (let w = 0; w < Math.min(limit, n); w++) {
    workers.push(
      (async () => {
        while (next < n) await fn(next++);
      })(),
    );
  }
  await Promise.all(workers);
}

module.exports = { freePort, sleep, waitForPort, http, parallel };
