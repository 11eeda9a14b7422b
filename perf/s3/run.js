#!/usr/bin/env node
// svc-cache benchmarks beside the alternatives, in the same run (see perf/s3/README.md):
//   hit4k / hit1m — cache-hit GET throughput (wrk) of a 4 KiB and a 1 MiB object through
//     svc-cache with static auth (one presigned URL repeated, and a new signature on every
//     request), nginx proxy_cache in front of the same origin, s3rver directly, and a bare
//     node:http server answering from memory (the ceiling of any node:http server here);
//     PERF_ROUNDS rounds, servers interleaved within each round, medians reported;
//   cold — latency of first reads of distinct 4 KiB objects (sequential, keep-alive client).
// Usage: node perf/s3/run.js [--write]   (--write rewrites perf/s3/RESULTS.md)
// Env: PERF_DURATION (s per cell, default 5), PERF_ROUNDS (default 3), PERF_CONNECTIONS
// (default 16), PERF_COLD (objects, default 200), PERF_SIGNATURES (distinct URLs, default 20000).
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { haveWrk, parseWrkOutput } = require('../lib/wrk');

const ROOT = path.resolve(__dirname, '..', '..');
const DURATION = Math.min(Number(process.env.PERF_DURATION || 5), 30);
const ROUNDS = Number(process.env.PERF_ROUNDS || 3);
const SIGNATURES = Number(process.env.PERF_SIGNATURES || 20000);
const CONNECTIONS = Number(process.env.PERF_CONNECTIONS || 16);
const COLD = Number(process.env.PERF_COLD || 200);
const BUCKET = 'bench';
const AK = 'BENCHKEY';
const SK = 'bench-secret';

const { startChild: start, stopChildren: stopAll, track } = require('../lib/children');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
/** One request; retried once when a kept-alive socket turns out to have been closed by the server. */
async function get(url, method = 'GET', body) {
  try {
    return await get1(url, method, body);
  } catch (err) {
    if (err.code !== 'ECONNRESET') throw err;
    return get1(url, method, body);
  }
}

function get1(url, method, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent, headers: body ? { 'content-length': body.length } : {} }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes: n }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function wrk(url, extra = []) {
  const r = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION}s`, '--timeout', '5s', url, ...extra], { encoding: 'utf8', timeout: (DURATION + 60) * 1000 });
  const p = parseWrkOutput(r.stdout || '');
  if (p.non2xx > 0 || (p.errors && Object.values(p.errors).some((v) => v > 0))) throw new Error(`wrk saw errors for ${url}:\n${r.stdout}`);
  return p;
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** The process and its children (nginx's worker), by pid, from /proc. */
function processTree(pid) {
  let kids = [];
  try {
    kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no such file on this kernel: the process alone
  }
  return [pid, ...kids.flatMap(processTree)];
}

/** CPU time (user + system) of the processes so far, in microseconds. */
function cpuMicros(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return (ticks * 1e6) / CLK_TCK;
}

function pct(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main() {
  if (!haveWrk()) throw new Error('wrk is not on PATH (apt-get install wrk)');
  if (spawnSync('nginx', ['-v']).error) throw new Error('nginx is not on PATH (apt-get install nginx-light)');
  spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'prepare.js')], { stdio: 'inherit' });
  const { presignUrl, SigningKeyCache } = require(path.join(ROOT, 'dist', 's3', 'sigv4'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-perf-'));

  const origin = await start(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, 'origin.js')], { ORIGIN_DIR: path.join(work, 'origin'), ORIGIN_BUCKETS: BUCKET }, /\{"port":(\d+)\}/);
  const direct = `http://127.0.0.1:${origin.match[1]}`;

  const cache = await start(
    process.execPath,
    [path.join(ROOT, 'bin', 'svc-cache')],
    {
      SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0',
      SVC_CACHE_METRICS_LISTEN: '',
      SVC_CACHE_ORIGIN_ENDPOINT: direct,
      SVC_CACHE_ORIGIN_ACCESS_KEY_ID: 'S3RVER',
      SVC_CACHE_ORIGIN_SECRET_ACCESS_KEY: 'S3RVER',
      SVC_CACHE_AUTH_MODE: 'static',
      SVC_CACHE_AUTH_ACCESS_KEY_ID: AK,
      SVC_CACHE_AUTH_SECRET_ACCESS_KEY: SK,
      SVC_CACHE_CACHE_DIR: path.join(work, 'cache'),
      SVC_CACHE_BUCKETS_TTL_SECONDS: '3600',
      SVC_CACHE_LOG_LEVEL: 'info',
    },
    /"listen":"http:\/\/127\.0\.0\.1:(\d+)"/,
  );
  const cacheUrl = `http://127.0.0.1:${cache.match[1]}`;

  const nginxPort = 20000 + Math.floor(Math.random() * 20000);
  const conf = path.join(work, 'nginx.conf');
  fs.mkdirSync(path.join(work, 'nginx-cache'));
  fs.writeFileSync(
    conf,
    `daemon off;
${process.getuid && process.getuid() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${work}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${work}/nginx-body;
  proxy_temp_path ${work}/nginx-proxy;
  fastcgi_temp_path ${work}/nginx-fastcgi;
  uwsgi_temp_path ${work}/nginx-uwsgi;
  scgi_temp_path ${work}/nginx-scgi;
  proxy_cache_path ${work}/nginx-cache levels=1:2 keys_zone=s3:16m max_size=2g inactive=60m use_temp_path=off;
  upstream origin { server 127.0.0.1:${origin.match[1]}; keepalive 32; }
  server {
    listen 127.0.0.1:${nginxPort};
    sendfile on;
    tcp_nopush off;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:${origin.match[1]};
      proxy_cache s3;
      proxy_cache_key $uri;
      proxy_cache_valid 200 206 60m;
      proxy_cache_lock on;
    }
  }
}
`,
  );
  const nginx = track(spawn('nginx', ['-c', conf, '-p', work], { stdio: ['ignore', 'inherit', 'inherit'] }));
  const nginxUrl = `http://127.0.0.1:${nginxPort}`;
  for (let i = 0; i < 50; i++) {
    try {
      await get(`${nginxUrl}/-/none`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const keys = new SigningKeyCache();
  const presigned = (base, key, now) => presignUrl('GET', new URL(`${base}/${BUCKET}/${key}`), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', keys, 604800, now);

  const bare = await start(process.execPath, [path.join(__dirname, 'bare-node.js')], { BARE_SIZES: '4096,1048576' }, /\{"port":(\d+)\}/);
  const bareUrl = `http://127.0.0.1:${bare.match[1]}`;

  // Objects go straight to the origin so every server starts cold.
  const sizes = { hit4k: 4096, hit1m: 1024 * 1024 };
  for (const [name, size] of Object.entries(sizes)) await get(`${direct}/${BUCKET}/${name}`, 'PUT', Buffer.alloc(size, 'x'));
  for (let i = 0; i < COLD; i++) await get(`${direct}/${BUCKET}/cold-${i}`, 'PUT', Buffer.alloc(4096, 'c'));

  // Distinct presigned URLs of each object (X-Amz-Date one second apart): far more than the
  // verifier remembers, so each request is verified in full (canonical request, two SHA-256, HMAC).
  const targets = {};
  for (const name of Object.keys(sizes)) {
    const file = path.join(work, `${name}.targets`);
    const now = Date.now();
    const lines = [];
    for (let i = 0; i < SIGNATURES; i++) {
      const u = new URL(presigned(cacheUrl, name, now - i * 1000));
      lines.push(u.pathname + u.search);
    }
    fs.writeFileSync(file, lines.join('\n') + '\n');
    targets[name] = file;
  }

  const servers = [
    { name: 'svc-cache, static auth, one presigned URL repeated', url: (k) => presigned(cacheUrl, k), cold: true, pid: cache.child.pid },
    { name: 'svc-cache, static auth, a new signature per request', url: (k) => presigned(cacheUrl, k), load: (k) => wrk(cacheUrl, ['-s', path.join(__dirname, 'cycle.lua'), '--', targets[k]]), pid: cache.child.pid },
    { name: 'nginx proxy_cache', url: (k) => `${nginxUrl}/${BUCKET}/${k}`, cold: true, pid: nginx.pid },
    { name: 's3rver direct', url: (k) => `${direct}/${BUCKET}/${k}`, cold: true, pid: origin.child.pid },
    { name: 'bare node:http from memory (anchor)', url: (k) => `${bareUrl}/${sizes[k]}`, pid: bare.child.pid },
  ];

  const results = {};
  for (const s of servers) {
    results[s.name] = { hit4k: [], hit1m: [], cpu4k: [], cpu1m: [] };
    if (!s.cold) continue;
    // Cold first reads, sequential.
    const lat = [];
    for (let i = 0; i < COLD; i++) {
      const t = process.hrtime.bigint();
      const r = await get(s.url(`cold-${i}`));
      if (r.status !== 200) throw new Error(`${s.name}: cold GET answered ${r.status}`);
      lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    lat.sort((a, b) => a - b);
    results[s.name].cold = { p50: pct(lat, 0.5), p99: pct(lat, 0.99) };
  }
  for (const s of servers)
    for (const name of Object.keys(sizes)) {
      const w = await get(s.url(name)); // warm
      if (w.status !== 200 || w.bytes !== sizes[name]) throw new Error(`${s.name}: warming ${name} answered ${w.status} with ${w.bytes} bytes`);
      await get(s.url(name));
    }
  for (let round = 0; round < ROUNDS; round++)
    for (const s of servers) {
      for (const name of Object.keys(sizes)) {
        // CPU time the server spent per request: unlike req/s, barely moved by load from elsewhere on the machine.
        const pids = processTree(s.pid);
        const before = cpuMicros(pids);
        const w = s.load ? s.load(name) : wrk(s.url(name));
        results[s.name][name].push(w.rps);
        results[s.name][name === 'hit4k' ? 'cpu4k' : 'cpu1m'].push((cpuMicros(pids) - before) / w.requests);
      }
      process.stderr.write(`round ${round + 1} ${s.name}: ${JSON.stringify(results[s.name])}\n`);
    }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const s of servers) for (const name of [...Object.keys(sizes), 'cpu4k', 'cpu1m']) results[s.name][name] = median(results[s.name][name]);

  const base = 'nginx proxy_cache';
  const anchor = 'bare node:http from memory (anchor)';
  const fmt = (x) => (x === undefined ? '–' : x.toFixed(2));
  const lines = [
    '# svc-cache benchmark results',
    '',
    `Generated by \`node perf/s3/run.js --write\` on ${new Date().toISOString().slice(0, 10)}: wrk -t1 -c${CONNECTIONS}, medians of ${ROUNDS} rounds × ${DURATION} s per cell (servers interleaved in each round), ${os.cpus().length} CPUs (load average at the end ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')}), Node ${process.version}, nginx \`worker_processes 1\`, \`tcp_nopush off\`. Absolute figures move from run to run; compare the ratios of one run.`,
    '',
    '| server | 4 KiB hit req/s | ÷ nginx | 1 MiB hit req/s | ÷ nginx | cold 4 KiB p50 ms | cold p99 ms |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const s of servers) {
    const r = results[s.name];
    const b = results[base];
    lines.push(`| ${s.name} | ${r.hit4k.toFixed(0)} | ${(r.hit4k / b.hit4k).toFixed(2)} | ${r.hit1m.toFixed(0)} | ${(r.hit1m / b.hit1m).toFixed(2)} | ${fmt(r.cold?.p50)} | ${fmt(r.cold?.p99)} |`);
  }
  lines.push(
    '',
    'Server CPU time per hit (user + system of the server process and its workers, medians): what each request costs, whatever else ran on the machine. Lower is better; "nginx ÷" above 1 means cheaper than nginx.',
    '',
    '| server | 4 KiB µs CPU per hit | nginx ÷ | 1 MiB µs CPU per hit | nginx ÷ |',
    '|---|---|---|---|---|',
  );
  for (const s of servers) {
    const r = results[s.name];
    const b = results[base];
    lines.push(`| ${s.name} | ${r.cpu4k.toFixed(1)} | ${(b.cpu4k / r.cpu4k).toFixed(2)} | ${r.cpu1m.toFixed(1)} | ${(b.cpu1m / r.cpu1m).toFixed(2)} |`);
  }
  const micro = spawnSync(process.execPath, [path.join(__dirname, 'micro-verify.js')], { encoding: 'utf8' }).stdout.trim();
  const svc = results[servers[0].name];
  const svcNew = results[servers[1].name];
  const a = results[anchor];
  lines.push(
    '',
    'Goals: 4 KiB hits ≥ 1.00 × nginx, 1 MiB hits ≥ 0.80 × nginx, with authentication on.',
    '',
    `Against the bare node:http anchor (the same headers and bytes from memory, no work at all): svc-cache with a repeated presigned URL ${(svc.hit4k / a.hit4k).toFixed(2)} × at 4 KiB and ${(svc.hit1m / a.hit1m).toFixed(2)} × at 1 MiB; with a new signature per request ${(svcNew.hit4k / a.hit4k).toFixed(2)} × and ${(svcNew.hit1m / a.hit1m).toFixed(2)} ×. nginx ÷ anchor: ${(results[base].hit4k / a.hit4k).toFixed(2)} × and ${(results[base].hit1m / a.hit1m).toFixed(2)} ×.`,
    '',
    `A repeated presigned URL is verified once; svc-cache remembers the verified result of that exact request until the URL expires. ${SIGNATURES} distinct presigned URLs (${SIGNATURES > 4096 ? "more" : "FEWER"} than the 4096 results it remembers) make every request pay the full verification. The verification alone: ${micro}.`,
    '',
  );
  const text = lines.join('\n');
  process.stdout.write(text);
  if (process.argv.includes('--write')) {
    // The soak's section (perf/s3/soak.js --write) is its own: kept as it is.
    const file = path.join(__dirname, 'RESULTS.md');
    const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const soak = old.indexOf('\n## Soak');
    fs.writeFileSync(file, text + (soak >= 0 ? old.slice(soak) : ''));
  }
  stopAll();
  agent.destroy();
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  stopAll();
  process.exit(1);
});
