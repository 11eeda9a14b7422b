'use strict';
// Small helpers shared by the perf scripts: ports, waiting, plain HTTP calls, process CPU time,
// integer settings from the environment.

const fs = require('node:fs');
const net = require('node:net');
const { freePort, freePorts } = require('../../ops/lib/free-ports');
const { spawnSync } = require('node:child_process');
const { request } = require('undici');

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

/** USER_HZ: the unit of /proc/<pid>/stat times (100 on Linux). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * CPU time (user + system, all threads) the process has used so far, in seconds, from
 * /proc/<pid>/stat. Per operation it is the figure other work on the machine disturbs least: a
 * busy neighbour slows the node down, but hardly changes how much CPU each operation takes.
 */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

/** CPU seconds used so far by every member of a local etcd (ops/lib/etcd-local.js), summed. */
function etcdCpuSeconds(etcd) {
  return etcd.members.reduce((a, m) => a + cpuSeconds(m.proc.pid), 0);
}

/** One sample's value in a Prometheus text scrape: `name` with exactly `labels` (`op="put"`; '' for none), 0 when absent. */
function metricSample(text, name, labels = '') {
  const head = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? 0 : Number(line.slice(head.length));
}

/** An integer setting from the environment (default `dflt`, at least `min` (1), at most `max`); exits on a bad value. */
function intEnv(name, dflt, max, min = 1) {
  const v = process.env[name];
  const n = v === undefined || v === '' ? dflt : Number(v);
  if (!Number.isInteger(n) || n < min) {
    console.error(`perf: ${name} must be an integer of at least ${min}`);
    process.exit(2);
  }
  return Math.min(n, max);
}

module.exports = { freePort, freePorts, sleep, waitForPort, http, parallel, cpuSeconds, etcdCpuSeconds, metricSample, intEnv };
