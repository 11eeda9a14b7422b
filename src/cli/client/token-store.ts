/**
 * Where `svc login` keeps a profile's token: the OS keyring (Secret Service on Linux,
 * Keychain on macOS, Credential Manager on Windows) through @napi-rs/keyring, or, with
 * `SVC_NO_KEYRING=1`, a file `tokens.json` in the config directory that only its owner may
 * read. The file store refuses a file (or directory) that group or others can read or write,
 * as ssh does with a private key: a token there may already have leaked.
 *
 * The only file that imports @napi-rs/keyring.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Entry } from '@napi-rs/keyring';
import { CliError, EXIT } from './errors';
import { configDir } from './profiles';

export interface TokenStore {
  /** Human name of the store, for messages ("keyring", "file <path>"). */
  readonly where: string;
  get(profile: string): string | null;
  set(profile: string, token: string): void;
  /** Returns whether a token was stored. */
  delete(profile: string): boolean;
}

const SERVICE = 'svc';

export function useKeyring(env: NodeJS.ProcessEnv): boolean {
  const v = env['SVC_NO_KEYRING'];
  return !(v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false');
}

export function tokenStore(env: NodeJS.ProcessEnv): TokenStore {
  return useKeyring(env) ? keyringStore() : fileStore(path.join(configDir(env), 'tokens.json'));
}

function keyringFailure(err: unknown): CliError {
  const why = err instanceof Error ? err.message : String(err);
  return new CliError(`the OS keyring is not available (${why}); set SVC_NO_KEYRING=1 to keep tokens in a private file instead`, EXIT.failure);
}

function keyringStore(): TokenStore {
  return {
    where: 'OS keyring',
    get(profile) {
      try {
        return new Entry(SERVICE, profile).getPassword() ?? null;
      } catch (err) {
        throw keyringFailure(err);
      }
    },
    set(profile, token) {
      try {
        new Entry(SERVICE, profile).setPassword(token);
      } catch (err) {
        throw keyringFailure(err);
      }
    },
    delete(profile) {
      try {
        return new Entry(SERVICE, profile).deletePassword();
      } catch (err) {
        throw keyringFailure(err);
      }
    },
  };
}

/** Refuses a path whose mode lets group or others in. */
function checkPrivate(p: string, what: string): void {
  const mode = fs.statSync(p).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new CliError(`${what} ${p} has permissions ${mode.toString(8).padStart(4, '0')}; it must be readable by its owner only (chmod ${what === 'directory' ? '700' : '600'} ${p})`, EXIT.failure);
  }
}

export function fileStore(file: string): TokenStore {
  const read = (): Record<string, string> => {
    if (!fs.existsSync(file)) return {};
    checkPrivate(file, 'token file');
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  };
  const write = (doc: Record<string, string>) => {
    const dir = path.dirname(file);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    // Created 0600 from the start (never readable by others, not even for a moment).
    fs.writeFileSync(tmp, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, file);
  };
  return {
    where: `file ${file}`,
    get: (profile) => read()[profile] ?? null,
    set(profile, token) {
      write({ ...read(), [profile]: token });
    },
    delete(profile) {
      const doc = read();
      if (!(profile in doc)) return false;
      delete doc[profile];
      write(doc);
      return true;
    },
  };
}
