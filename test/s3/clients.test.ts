/**
 * svc-cache with Debian's command-line clients and libraries: awscli 2, s3cmd and boto3, static
 * SigV4 auth. CI installs them (.ci/run); the tests fail, not skip, when they are missing.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { type TestCache, startCache } from './helpers/cache-server';
import { type TestOrigin, startOrigin, tempDir } from './helpers/origin';

const run = promisify(execFile);
const BUCKET = 'cli-bucket';
const AK = 'CLIKEY';
const SK = 'cli-secret';
// Debian's awscli 2 lives in /usr/bin; a pip-installed awscli 1 earlier in PATH is not the client under test.
const AWS = fs.existsSync('/usr/bin/aws') ? '/usr/bin/aws' : 'aws';
const S3CMD = fs.existsSync('/usr/bin/s3cmd') ? '/usr/bin/s3cmd' : 's3cmd';
// Debian's python3 with python3-boto3, not another python earlier in PATH.
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

let origin: TestOrigin;
let cache: TestCache;
let work: string;

beforeAll(async () => {
  origin = await startOrigin([BUCKET]);
  cache = await startCache(origin, { auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
  work = tempDir('svc-cache-cli-');
});
afterAll(async () => {
  await cache?.stop();
  await origin?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});
afterEach(async () => {
  expect((await origin.stats()).log).toEqual([]);
});

function env(secret = SK): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: work,
    AWS_ACCESS_KEY_ID: AK,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: path.join(work, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'aws-credentials'),
    AWS_PAGER: '',
  };
}

const aws = (args: string[], secret?: string) => run(AWS, ['--endpoint-url', cache.url, ...args], { env: env(secret), maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' });

function file(name: string, data: Buffer): string {
  const p = path.join(work, name);
  fs.writeFileSync(p, data);
  return p;
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('awscli 2', () => {
  it('copies a file up and down, heads, ranges and removes it', async () => {
    const data = Buffer.from('awscli says hello\n'.repeat(100));
    await aws(['s3', 'cp', file('small.txt', data), `s3://${BUCKET}/dir/small file.txt`]);
    const down = await aws(['s3', 'cp', `s3://${BUCKET}/dir/small file.txt`, '-']);
    expect(down.stdout.equals(data)).toBe(true);
    const head = JSON.parse((await aws(['s3api', 'head-object', '--bucket', BUCKET, '--key', 'dir/small file.txt'])).stdout.toString()) as { ContentLength: number };
    expect(head.ContentLength).toBe(data.length);
    const out = path.join(work, 'range.out');
    await aws(['s3api', 'get-object', '--bucket', BUCKET, '--key', 'dir/small file.txt', '--range', 'bytes=-6', out]);
    expect(fs.readFileSync(out).toString()).toBe('hello\n');
    const ls = (await aws(['s3', 'ls', `s3://${BUCKET}/dir/`])).stdout.toString();
    expect(ls).toContain('small file.txt');
    await aws(['s3', 'rm', `s3://${BUCKET}/dir/small file.txt`]);
    await expect(aws(['s3api', 'head-object', '--bucket', BUCKET, '--key', 'dir/small file.txt'])).rejects.toThrow(/404|Not Found/);
  });

  it('uploads a 17 MiB file in parts (Content-MD5, Expect: 100-continue) and downloads it in ranges', async () => {
    const data = Buffer.alloc(17 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32BE(i, i);
    await aws(['s3', 'cp', file('big.bin', data), `s3://${BUCKET}/big.bin`]);
    const out = path.join(work, 'big.out');
    await aws(['s3', 'cp', `s3://${BUCKET}/big.bin`, out]);
    expect(md5(fs.readFileSync(out))).toBe(md5(data));
    // Second download from the cache.
    fs.rmSync(out);
    await aws(['s3', 'cp', `s3://${BUCKET}/big.bin`, out]);
    expect(md5(fs.readFileSync(out))).toBe(md5(data));
  });

  it('is refused with a wrong secret', async () => {
    await expect(aws(['s3', 'ls', `s3://${BUCKET}/`], 'wrong')).rejects.toThrow(/SignatureDoesNotMatch/);
  });
});

describe('boto3', () => {
  it('is served when botocore signs with an HTTP Date header instead of x-amz-date', async () => {
    const script = path.join(__dirname, 'fixtures', 'boto3-date-header.py');
    const { stdout } = await run(PYTHON, [script, cache.url, AK, SK, BUCKET], { env: { ...env(), BOTO_DISABLE_CRT: 'true' } });
    const r = JSON.parse(stdout.toString()) as { dated: string; plain: string; range: string; contentRange: string; headers: string[][] };
    expect(r).toMatchObject({ dated: 'signed with Date', plain: 'signed with Date', range: 'Date', contentRange: 'bytes 12-15/16' });
    // The first two requests really went without x-amz-date (signed with Date), the rest with it.
    expect(r.headers[0]).toContain('date');
    expect(r.headers[0]).not.toContain('x-amz-date');
    expect(r.headers[1]).not.toContain('x-amz-date');
    expect(r.headers[2]).toContain('x-amz-date');
  });
});

describe('s3cmd', () => {
  function s3cmd(args: string[], secret = SK) {
    const cfg = path.join(work, 's3cfg');
    const host = new URL(cache.url).host;
    fs.writeFileSync(cfg, `[default]\naccess_key = ${AK}\nsecret_key = ${secret}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nbucket_location = us-east-1\nsignature_v2 = False\n`);
    return run(S3CMD, ['-c', cfg, '--no-progress', ...args], { env: env(secret), maxBuffer: 64 * 1024 * 1024 });
  }

  it('puts, gets, lists with MD5s and deletes', async () => {
    const data = Buffer.from('s3cmd payload with a key of several words');
    await s3cmd(['put', file('s3cmd.txt', data), `s3://${BUCKET}/s3cmd/key with spaces+plus.txt`]);
    const out = path.join(work, 's3cmd.out');
    await s3cmd(['get', '--force', `s3://${BUCKET}/s3cmd/key with spaces+plus.txt`, out]);
    expect(fs.readFileSync(out).equals(data)).toBe(true);
    const ls = (await s3cmd(['ls', `s3://${BUCKET}/s3cmd/`])).stdout;
    expect(ls).toContain('key with spaces+plus.txt');
    // (`s3cmd info` also asks for the ACL, whose s3rver answer s3cmd cannot parse.)
    const listed = (await s3cmd(['ls', '--list-md5', `s3://${BUCKET}/s3cmd/`])).stdout;
    expect(listed).toContain(md5(data));
    await s3cmd(['del', `s3://${BUCKET}/s3cmd/key with spaces+plus.txt`]);
    await expect(s3cmd(['get', '--force', `s3://${BUCKET}/s3cmd/key with spaces+plus.txt`, out])).rejects.toThrow(/404|NoSuchKey|does not exist/i);
  });

  it('is refused with a wrong secret', async () => {
    await expect(s3cmd(['ls', `s3://${BUCKET}/`], 'wrong')).rejects.toThrow(/SignatureDoesNotMatch|403/);
  });
});

/**
 * Virtual-hosted names (`<bucket>.s3.test`) do not resolve here, so the CLIs reach svc-cache
 * through a plain forward proxy (HTTP_PROXY / s3cmd's proxy_host): the request keeps the
 * virtual-hosted Host header the client signed, and the proxy only picks the socket.
 */
async function forwardProxy(target: string): Promise<{ port: number; seen: string[]; close(): Promise<void> }> {
  const t = new URL(target);
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url!);
    seen.push(`${req.method} ${req.headers.host} ${u.pathname}`);
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: u.pathname + u.search, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode!, ures.headers);
      ures.pipe(res);
    });
    up.on('error', (err) => res.destroy(err));
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

describe('virtual-hosted addressing with the command-line clients (static auth)', () => {
  let vcache: TestCache;
  let proxy: { port: number; seen: string[]; close(): Promise<void> };
  beforeAll(async () => {
    vcache = await startCache(origin, { server: { addressing: { style: 'virtual_hosted', domain: 's3.test' } }, auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
    proxy = await forwardProxy(vcache.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await vcache?.stop();
  });

  it('serves awscli with addressing_style = virtual, and refuses a wrong secret', async () => {
    const port = new URL(vcache.url).port;
    const cfg = path.join(work, 'aws-config-virtual');
    fs.writeFileSync(cfg, '[default]\ns3 =\n  addressing_style = virtual\n');
    const vaws = (args: string[], secret = SK) =>
      run(AWS, ['--endpoint-url', `http://s3.test:${port}`, ...args], {
        env: { ...env(secret), AWS_CONFIG_FILE: cfg, HTTP_PROXY: `http://127.0.0.1:${proxy.port}`, NO_PROXY: '' },
        maxBuffer: 16 * 1024 * 1024,
        encoding: 'buffer',
      });
    const data = Buffer.from('virtual-hosted awscli\n'.repeat(50));
    await vaws(['s3', 'cp', file('virtual.txt', data), `s3://${BUCKET}/virtual/a b.txt`]);
    for (let i = 0; i < 2; i++) expect((await vaws(['s3', 'cp', `s3://${BUCKET}/virtual/a b.txt`, '-'])).stdout.equals(data)).toBe(true);
    const out = path.join(work, 'virtual-range.out');
    await vaws(['s3api', 'get-object', '--bucket', BUCKET, '--key', 'virtual/a b.txt', '--range', 'bytes=8-13', out]);
    expect(fs.readFileSync(out).toString()).toBe('hosted');
    await expect(vaws(['s3', 'cp', `s3://${BUCKET}/virtual/a b.txt`, '-'], 'wrong')).rejects.toThrow(/SignatureDoesNotMatch|403|Forbidden/);
    await vaws(['s3', 'rm', `s3://${BUCKET}/virtual/a b.txt`]);
    // Every request went out virtual-hosted: the bucket in the Host header, not in the path.
    const mine = proxy.seen.splice(0);
    expect(mine.length).toBeGreaterThanOrEqual(6);
    for (const line of mine) expect(line).toMatch(new RegExp(`^[A-Z]+ ${BUCKET}\\.s3\\.test:${port} /virtual/a%20b\\.txt$`));
  });

  it('serves s3cmd with host_bucket = %(bucket)s.<domain>', async () => {
    const port = new URL(vcache.url).port;
    const cfg = path.join(work, 's3cfg-virtual');
    fs.writeFileSync(
      cfg,
      `[default]\naccess_key = ${AK}\nsecret_key = ${SK}\nhost_base = s3.test:${port}\nhost_bucket = %(bucket)s.s3.test:${port}\nuse_https = False\n` +
        `bucket_location = us-east-1\nsignature_v2 = False\nproxy_host = 127.0.0.1\nproxy_port = ${proxy.port}\n`,
    );
    const s3cmd = (args: string[]) => run(S3CMD, ['-c', cfg, '--no-progress', ...args], { env: env(), maxBuffer: 16 * 1024 * 1024 });
    const data = Buffer.from('virtual-hosted s3cmd');
    await s3cmd(['put', file('virtual-s3cmd.txt', data), `s3://${BUCKET}/virtual/s3cmd key.txt`]);
    const out = path.join(work, 'virtual-s3cmd.out');
    await s3cmd(['get', '--force', `s3://${BUCKET}/virtual/s3cmd key.txt`, out]);
    expect(fs.readFileSync(out).equals(data)).toBe(true);
    await s3cmd(['del', `s3://${BUCKET}/virtual/s3cmd key.txt`]);
    const mine = proxy.seen.splice(0);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    for (const line of mine) expect(line).toMatch(new RegExp(`^[A-Z]+ ${BUCKET}\\.s3\\.test:${port} /`));
  });
});

describe('awscli 2 over TLS (static auth)', () => {
  it('copies up and down through the TLS listener, trusting the configured certificate', async () => {
    const key = path.join(work, 'tls-key.pem');
    const cert = path.join(work, 'tls-cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const tcache = await startCache(origin, { server: { tls: { cert, key } }, auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
    try {
      expect(tcache.url.startsWith('https://')).toBe(true);
      const taws = (args: string[]) => run(AWS, ['--endpoint-url', tcache.url, '--ca-bundle', cert, ...args], { env: env(), maxBuffer: 16 * 1024 * 1024, encoding: 'buffer' });
      const data = Buffer.from('tls awscli\n'.repeat(300));
      await taws(['s3', 'cp', file('tls.txt', data), `s3://${BUCKET}/tls/file.txt`]);
      for (let i = 0; i < 2; i++) expect((await taws(['s3', 'cp', `s3://${BUCKET}/tls/file.txt`, '-'])).stdout.equals(data)).toBe(true);
      await taws(['s3', 'rm', `s3://${BUCKET}/tls/file.txt`]);
    } finally {
      await tcache.stop();
    }
  });
});
