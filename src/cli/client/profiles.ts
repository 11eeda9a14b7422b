/**
 * Profiles: named sets of node addresses, kept in one JSON file in the client's config
 * directory (`SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`). Tokens are
 * never in this file: they live in the token store (token-store.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { usageError } from './errors';

export interface Profile {
  /** Protocol listener, e.g. http://127.0.0.1:4437. */
  url: string;
  /** Admin listener, e.g. http://127.0.0.1:9090. */
  adminUrl: string;
  /** Durable Streams listener, when the node runs one. */
  dsUrl?: string;
}

export interface ProfileFile {
  current: string | null;
  profiles: Record<string, Profile>;
}

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env['SVC_CONFIG_DIR']) return env['SVC_CONFIG_DIR'];
  const base = env['XDG_CONFIG_HOME'] || path.join(os.homedir(), '.config');
  return path.join(base, 'svc');
}

const fileOf = (env: NodeJS.ProcessEnv) => path.join(configDir(env), 'profiles.json');

export function readProfiles(env: NodeJS.ProcessEnv): ProfileFile {
  let text: string;
  try {
    text = fs.readFileSync(fileOf(env), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, profiles: {} };
    throw err;
  }
  const doc = JSON.parse(text) as Partial<ProfileFile>;
  return { current: doc.current ?? null, profiles: doc.profiles ?? {} };
}

/** Written whole to a temporary file and renamed, so a crash never leaves half a file. */
export function writeProfiles(env: NodeJS.ProcessEnv, doc: ProfileFile): void {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.profiles.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, fileOf(env));
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) throw usageError(`profile name "${name}" must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit`);
  return name;
}

/** An address given as host:port gets http://; a trailing slash is dropped. */
export function normalizeUrl(text: string, what: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw usageError(`${what}: "${text}" is not an address (host:port or http(s)://host:port)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`${what}: only http and https are supported (got ${u.protocol})`);
  return u.toString().replace(/\/$/, '');
}
