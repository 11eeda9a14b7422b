'use strict';
// Runs wrk (https://github.com/wg/wrk) with one of the Lua scripts in perf/wrk/ and
// parses its result. The scripts' done() hook prints one machine-readable line
// (`WRKJSON {...}`, latencies in microseconds); wrk's own text summary is parsed as a
// fallback and for the "Non-2xx or 3xx responses" count.

const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');

const WRK_DIR = path.resolve(__dirname, '..', 'wrk');

/** True when a `wrk` binary is on PATH. */
function haveWrk() {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return !r.error;
}

const UNIT_US = { us: 1, ms: 1000, s: 1000000 };

/** Parse wrk's stdout into {requests, seconds, rps, latency{p50,p99,...} in µs, errors, non2xx}. */
function parseWrkOutput(text) {
  const out = { requests: 0, seconds: 0, rps: 0, latency: {}, errors: {}, non2xx: 0, raw: text };
  const m = /^WRKJSON (.*)$/m.exec(text);
  if (m) {
    const j = JSON.parse(m[1]);
    out.requests = j.requests;
    out.seconds = j.duration_us / 1e6;
    out.rps = j.requests / out.seconds;
    out.latency = j.latency_us;
    out.errors = j.errors;
  } else {
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
    if (rps) out.rps = Number(rps[1]);
    const total = /(\d+) requests in ([\d.]+)(us|ms|s)/.exec(text);
    if (total) {
      out.requests = Number(total[1]);
      out.seconds = (Number(total[2]) * UNIT_US[total[3]]) / 1e6;
    }
    const lat = /Latency\s+([\d.]+)(us|ms|s)/.exec(text);
    if (lat) out.latency.mean = Number(lat[1]) * UNIT_US[lat[2]];
  }
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  if (non2xx) out.non2xx = Number(non2xx[1]);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  if (sock && !m) {
    out.errors = { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4], status: out.non2xx };
  }
  return out;
}

/**
 * Run wrk once: `wrk -t1 -c<connections> -d<seconds>s --timeout <t>s -s <script> <url> -- <args>`.
 * Resolves with the parsed result; rejects if wrk fails to run.
 */
function runWrk({ url, script, args = [], seconds, connections = 64, threads = 1, timeoutSeconds = 5, cpus = '' }) {
  const argv = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    `--timeout`,
    `${timeoutSeconds}s`,
    '-s',
    path.join(WRK_DIR, script),
    url,
    '--',
    ...args.map(String),
  ];
  return new Promise((resolve, reject) => {
    // `cpus`: a taskset CPU list for wrk (a benchmark that keeps load generator and server apart on a larger machine).
    const child = cpus === '' ? spawn('wrk', argv, { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn('taskset', ['-c', cpus, 'wrk', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // wrk stops by itself after -d; this guard only ends a wrk that hangs.
    const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + timeoutSeconds + 10) * 1000);
    child.once('error', (err) => {
      clearTimeout(guard);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(guard);
      if (code !== 0) return reject(new Error(`wrk exited with ${code}: ${stderr || stdout}`));
      const r = parseWrkOutput(stdout);
      if (!r.requests && !r.rps) return reject(new Error(`could not parse wrk output:\n${stdout}\n${stderr}`));
      resolve(r);
    });
  });
}

module.exports = { haveWrk, runWrk, parseWrkOutput };
