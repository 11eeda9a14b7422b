/**
 * The endpoint's own credentials toward the origin. Sources, in `auto` order: static keys
 * from [origin], the AWS_* environment, the shared credentials file profile, the instance
 * role (IMDSv2). Temporary credentials are refreshed five minutes before they expire.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { type CacheConfig } from './config';
import { type Credentials } from './sigv4';

export interface CredentialSource {
  get(): Promise<Credentials>;
  readonly kind: string;
}

const REFRESH_MARGIN_MS = 5 * 60 * 1000; // 5 min

function fromEnv(env: NodeJS.ProcessEnv): Credentials | undefined {
  const id = env.AWS_ACCESS_KEY_ID;
  const secret = env.AWS_SECRET_ACCESS_KEY;
  if (!id || !secret) return undefined;
  return { accessKeyId: id, secretAccessKey: secret, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

/** Reads one profile of an INI-style shared credentials file. */
export function fromProfile(file: string, profile: string): Credentials | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let current = '';
  const values: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[\s*(?:profile\s+)?([^\]]+?)\s*\]$/.exec(line);
    if (section) {
      current = section[1]!;
      continue;
    }
    const eq = line.indexOf('=');
    if (current === profile && eq > 0) values[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  const id = values['aws_access_key_id'];
  const secret = values['aws_secret_access_key'];
  if (!id || !secret) return undefined;
  return { accessKeyId: id, secretAccessKey: secret, sessionToken: values['aws_session_token'] || undefined };
}

function imdsRequest(base: URL, method: string, p: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port || 80, method, path: p, headers, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`instance metadata ${p}: HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('instance metadata service timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** IMDSv2: a session token, then the role name, then the role's credentials. */
async function fromInstanceRole(endpoint: string): Promise<{ creds: Credentials; expires: number }> {
  const base = new URL(endpoint);
  const token = await imdsRequest(base, 'PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' });
  const h = { 'x-aws-ec2-metadata-token': token };
  const role = (await imdsRequest(base, 'GET', '/latest/meta-data/iam/security-credentials/', h)).split('\n')[0]!.trim();
  const j = JSON.parse(await imdsRequest(base, 'GET', `/latest/meta-data/iam/security-credentials/${role}`, h)) as Record<string, string>;
  if (!j.AccessKeyId || !j.SecretAccessKey) throw new Error('instance metadata returned no credentials');
  return { creds: { accessKeyId: j.AccessKeyId, secretAccessKey: j.SecretAccessKey, sessionToken: j.Token }, expires: j.Expiration ? Date.parse(j.Expiration) : Date.now() + 3600_000 };
}

export function credentialSource(o: CacheConfig['origin'], env: NodeJS.ProcessEnv): CredentialSource {
  const fixed = (kind: string, c: Credentials): CredentialSource => ({ kind, get: async () => c });
  const want = o.credentials;
  if ((want === 'auto' || want === 'static') && o.access_key_id !== '' && o.secret_access_key !== '')
    return fixed('static', { accessKeyId: o.access_key_id, secretAccessKey: o.secret_access_key, sessionToken: o.session_token || undefined });
  if (want === 'auto' || want === 'environment') {
    const c = fromEnv(env);
    if (c) return fixed('environment', c);
    if (want === 'environment') throw new Error('origin.credentials = "environment" but AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are not set');
  }
  if (want === 'auto' || want === 'profile') {
    const file = env.AWS_SHARED_CREDENTIALS_FILE || path.join(os.homedir(), '.aws', 'credentials');
    const profile = o.profile || env.AWS_PROFILE || 'default';
    const c = fromProfile(file, profile);
    if (c) return fixed(`profile ${profile}`, c);
    if (want === 'profile') throw new Error(`origin.credentials = "profile" but profile "${profile}" has no keys in ${file}`);
  }
  let cached: { creds: Credentials; expires: number } | undefined;
  let pending: Promise<{ creds: Credentials; expires: number }> | undefined;
  return {
    kind: 'instance role',
    async get() {
      if (cached && cached.expires - REFRESH_MARGIN_MS > Date.now()) return cached.creds;
      pending ??= fromInstanceRole(o.imds_endpoint).finally(() => (pending = undefined));
      cached = await pending;
      return cached.creds;
    },
  };
}
