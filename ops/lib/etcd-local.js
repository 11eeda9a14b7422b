'use strict';
// A local etcd cluster on loopback ports (Debian's etcd-server; `etcd` on PATH), for ops/local-cluster.js
// and perf/metadata-etcd.js. Each member gets a free client and peer port and a data directory under
// `root`; stop() kills the members (SIGTERM, then SIGKILL by PID) and leaves `root` to the caller.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const { freePort, freePorts } = require('./free-ports');
const path = require('node:path');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `size` etcd members under `root` and wait until a linearizable read succeeds.
 * Resolves with {endpoints: ['127.0.0.1:port', …], url(prefix), members, stop()}.
 */
async function startEtcd(root, size = 3) {
  const check = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (check.error) throw new Error('`etcd` was not found on PATH: apt-get install etcd-server etcd-client');
  fs.mkdirSync(root, { recursive: true });
  const members = [];
  const ports = await freePorts(2 * size);
  for (let i = 0; i < size; i++) members.push({ name: `etcd${i}`, client: ports[2 * i], peer: ports[2 * i + 1] });
  const initial = members.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`).join(',');
  for (const m of members) {
    const log = fs.openSync(path.join(root, `${m.name}.log`), 'a');
    m.proc = spawn('etcd', [
      '--name', m.name,
      '--data-dir', path.join(root, m.name),
      '--listen-client-urls', `http://127.0.0.1:${m.client}`,
      '--advertise-client-urls', `http://127.0.0.1:${m.client}`,
      '--listen-peer-urls', `http://127.0.0.1:${m.peer}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${m.peer}`,
      '--initial-cluster', initial,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', `svc-local-${process.pid}`,
      // Auto-compaction and a quota, as in production (ops/README.md).
      '--auto-compaction-mode', 'periodic',
      '--auto-compaction-retention', '1h',
      '--quota-backend-bytes', String(2 * 1024 * 1024 * 1024),
      '--logger', 'zap',
      '--log-level', 'warn',
    ], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
  }
  const endpoints = members.map((m) => `127.0.0.1:${m.client}`);
  const stop = async () => {
    await Promise.all(
      members.map(
        (m) =>
          new Promise((resolve) => {
            if (!m.proc || m.proc.exitCode !== null || m.proc.signalCode !== null) return resolve();
            const timer = setTimeout(() => m.proc.kill('SIGKILL'), 5000);
            m.proc.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            m.proc.kill('SIGTERM');
          }),
      ),
    );
  };
  const end = Date.now() + 30000;
  for (;;) {
    const r = spawnSync('etcdctl', ['--endpoints', endpoints.join(','), '--command-timeout', '2s', 'get', 'svc-health-probe'], { env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'utf8', timeout: 5000 });
    if (r.status === 0) break;
    if (Date.now() > end || members.some((m) => m.proc.exitCode !== null)) {
      await stop();
      throw new Error(`etcd did not start (logs in ${root}): ${r.stderr || r.error}`);
    }
    await sleep(200);
  }
  return { endpoints, members, url: (prefix) => `etcd://${endpoints.join(',')}/${prefix}`, stop };
}

module.exports = { startEtcd, freePort, freePorts };
