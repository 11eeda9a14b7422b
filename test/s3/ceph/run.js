#!/usr/bin/env node
// Runs the range, conditional, presign and aws-chunked tests of ceph/s3-tests (tests.txt)
// against svc-cache with static auth, in front of the test origin (s3rver behind the
// verifying shim). The suite is not part of this repository: point S3TESTS_DIR at a checkout.
//   S3TESTS_DIR=<s3-tests checkout> node test/s3/ceph/run.js [test ids]   (after `npm run build`)
// Needs Debian's python3-boto3 python3-pytest python3-munch python3-gevent python3-isodate
// python3-requests python3-tz python3-httplib2 python3-lxml python3-yaml.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SUITE = process.env.S3TESTS_DIR;
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const AK = '0555b35654ad1656d804';
const SK = 'h7GhxuBLTrlhVUyxSPUKUV8r/2EI4ngqJxD7iBdBYLhwluN30JaT3Q==';

function start(args, env, pattern) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) resolve({ child, m });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)));
  });
}

async function main() {
  if (!SUITE || !fs.existsSync(path.join(SUITE, 's3tests', 'functional', 'test_s3.py'))) throw new Error('set S3TESTS_DIR to a ceph/s3-tests checkout');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-s3tests-'));
  const origin = await start(['--openssl-legacy-provider', path.join(__dirname, '..', 'fixtures', 'origin-server.js')], { ORIGIN_DIR: path.join(work, 'origin') }, /\{"shim":(\d+),"s3rver":(\d+)\}/);
  const cache = await start(
    [path.join(ROOT, 'bin', 'svc-cache')],
    {
      SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0',
      SVC_CACHE_METRICS_LISTEN: '',
      SVC_CACHE_ORIGIN_ENDPOINT: `http://127.0.0.1:${origin.m[1]}`,
      SVC_CACHE_ORIGIN_ACCESS_KEY_ID: 'S3RVER',
      SVC_CACHE_ORIGIN_SECRET_ACCESS_KEY: 'S3RVER',
      SVC_CACHE_AUTH_MODE: 'static',
      SVC_CACHE_AUTH_ACCESS_KEY_ID: AK,
      SVC_CACHE_AUTH_SECRET_ACCESS_KEY: SK,
      SVC_CACHE_CACHE_DIR: path.join(work, 'cache'),
    },
    /"listen":"http:\/\/127\.0\.0\.1:(\d+)"/,
  );
  const port = cache.m[1];
  // Every credential section the suite reads; all use the one key pair static auth knows.
  const user = (name) => `display_name = ${name}\nuser_id = ${name}\nemail = ${name}@example.com\naccess_key = ${AK}\nsecret_key = ${SK}\n`;
  const conf = path.join(work, 's3tests.conf');
  fs.writeFileSync(
    conf,
    `[DEFAULT]\nhost = 127.0.0.1\nport = ${port}\nis_secure = False\nssl_verify = False\n\n[fixtures]\nbucket prefix = svc-{random}-\n\n` +
      `[s3 main]\n${user('main')}api_name = default\n\n[s3 alt]\n${user('alt')}\n[s3 tenant]\n${user('tenant')}tenant = testx\n\n` +
      `[iam]\n${user('iam')}\n[iam root]\n${user('iamroot')}\n[iam alt root]\n${user('iamaltroot')}\n`,
  );
  // Test ids from the command line (`test_x` or `test_headers.py::test_y`), else tests.txt.
  const listed = process.argv.length > 2 ? process.argv.slice(2) : fs.readFileSync(path.join(__dirname, 'tests.txt'), 'utf8').split('\n');
  const tests = listed
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((t) => `s3tests/functional/${t.includes('::') ? t : `test_s3.py::${t}`}`);
  const r = spawnSync(PYTHON, ['-m', 'pytest', '-p', 's3tests_plugin', '-v', '-o', 'cache_dir=' + path.join(work, 'pytest-cache'), ...tests], {
    cwd: SUITE,
    env: { ...process.env, S3TEST_CONF: conf, BOTO_DISABLE_CRT: 'true', PYTHONPATH: [__dirname, SUITE].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' },
    stdio: 'inherit',
  });
  cache.child.kill('SIGTERM');
  origin.child.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
