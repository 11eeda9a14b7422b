import * as fs from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import * as path from 'node:path';
import { cacheConfig } from '../../src/s3/config';
import { credentialSource } from '../../src/s3/credentials';
import { tempDir } from './helpers/origin';

const origin = (over: Record<string, unknown> = {}) => cacheConfig({ origin: { endpoint: 'http://o', ...over } }).origin;

describe('origin credentials', () => {
  const dir = tempDir('svc-cache-creds-');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'credentials');
  fs.writeFileSync(file, '[default]\naws_access_key_id = DEF\naws_secret_access_key = defsecret\n\n[profile other]\naws_access_key_id = OTH\naws_secret_access_key = othsecret\naws_session_token = tok\n');

  it('prefers static keys, then the environment, then the profile file in auto mode', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'ENV', AWS_SECRET_ACCESS_KEY: 'envsecret', AWS_SHARED_CREDENTIALS_FILE: file };
    expect(await credentialSource(origin({ access_key_id: 'ST', secret_access_key: 'stsecret' }), env).get()).toEqual({ accessKeyId: 'ST', secretAccessKey: 'stsecret', sessionToken: undefined });
    expect((await credentialSource(origin(), env).get()).accessKeyId).toBe('ENV');
    expect((await credentialSource(origin(), { AWS_SHARED_CREDENTIALS_FILE: file }).get()).accessKeyId).toBe('DEF');
    expect(await credentialSource(origin({ profile: 'other' }), { AWS_SHARED_CREDENTIALS_FILE: file }).get()).toEqual({ accessKeyId: 'OTH', secretAccessKey: 'othsecret', sessionToken: 'tok' });
    expect((await credentialSource(origin(), { AWS_SHARED_CREDENTIALS_FILE: file, AWS_PROFILE: 'other' }).get()).accessKeyId).toBe('OTH');
  });

  it('fails fast when a named source has no keys', () => {
    expect(() => credentialSource(origin({ credentials: 'environment' }), {})).toThrow(/AWS_ACCESS_KEY_ID/);
    expect(() => credentialSource(origin({ credentials: 'profile', profile: 'missing' }), { AWS_SHARED_CREDENTIALS_FILE: file })).toThrow(/missing/);
  });

  it('takes the instance role from IMDSv2 and refreshes it before it expires', async () => {
    let issued = 0;
    const imds = http.createServer((req, res) => {
      if (req.method === 'PUT' && req.url === '/latest/api/token') return void res.end('TOKEN');
      if (req.headers['x-aws-ec2-metadata-token'] !== 'TOKEN') return void res.writeHead(401).end();
      if (req.url === '/latest/meta-data/iam/security-credentials/') return void res.end('role-a\n');
      if (req.url === '/latest/meta-data/iam/security-credentials/role-a') {
        issued++;
        // Expires within the refresh margin, so every get() fetches again.
        return void res.end(JSON.stringify({ AccessKeyId: `ROLE${issued}`, SecretAccessKey: 's', Token: 't', Expiration: new Date(Date.now() + 60_000).toISOString() }));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => imds.listen(0, '127.0.0.1', r));
    try {
      const src = credentialSource(origin({ credentials: 'instance_role', imds_endpoint: `http://127.0.0.1:${(imds.address() as AddressInfo).port}` }), {});
      expect(await src.get()).toEqual({ accessKeyId: 'ROLE1', secretAccessKey: 's', sessionToken: 't' });
      expect((await src.get()).accessKeyId).toBe('ROLE2');
    } finally {
      await new Promise<void>((r) => imds.close(() => r()));
    }
  });
});
