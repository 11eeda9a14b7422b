/**
 * What every client command runs with: the node's addresses, the token and the output
 * format, resolved from (highest first) flags, `SVC_*` environment variables, the profile
 * file, and defaults — the same order as the node's own config (docs/config.md).
 *
 *   --url / SVC_URL           > profile.url       > http://127.0.0.1:4437
 *   --admin-url / SVC_ADMIN_URL > profile.adminUrl > http://127.0.0.1:9090
 *   --token / SVC_TOKEN       > the token store (keyring or file) for the profile
 */
import { CliError, EXIT, usageError } from './errors';
import { normalizeUrl, readProfiles, type Profile } from './profiles';
import { tokenStore, useKeyring } from './token-store';

export type OutputFormat = 'human' | 'json';

/** The global flags, as commander parsed them (env already applied by commander). */
export interface GlobalFlags {
  profile?: string;
  url?: string;
  adminUrl?: string;
  dsUrl?: string;
  token?: string;
  output?: string;
  maxRedirects?: string;
}

export interface ClientIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  readonly columns: number;
  /** Resolves once stdout has taken what was written (backpressure for long reads into a pipe). */
  drain(): Promise<void>;
}

export interface Context {
  readonly env: NodeJS.ProcessEnv;
  readonly io: ClientIo;
  readonly profileName: string;
  /** The profile as stored, or null when none exists under that name. */
  readonly profile: Profile | null;
  readonly url: string;
  readonly adminUrl: string;
  readonly dsUrl: string | null;
  readonly output: OutputFormat;
  /** `-o template=<fmt>`: how `read` and `tail` print each record (records.ts); null otherwise. */
  readonly template: string | null;
  readonly maxRedirects: number;
  /** Where the token came from, for `whoami`. */
  readonly tokenSource: 'flag' | 'env' | 'store' | 'none';
  /** The token, read lazily (the keyring is asked only when a command needs it). */
  token(): string | null;
}

export const DEFAULT_URL = 'http://127.0.0.1:4437';
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9090';

export function makeContext(flags: GlobalFlags, env: NodeJS.ProcessEnv, io: ClientIo, tokenFromEnv: boolean): Context {
  const file = readProfiles(env);
  const explicit = flags.profile;
  const profileName = explicit ?? file.current ?? 'default';
  const profile = file.profiles[profileName] ?? null;
  if (explicit !== undefined && profile === null) throw new CliError(`no profile "${explicit}" (svc profile list shows them)`, EXIT.usage);
  const given = flags.output ?? 'human';
  const template = given.startsWith('template=') ? given.slice('template='.length) : null;
  const output = template !== null ? 'human' : given;
  if (output !== 'human' && output !== 'json') throw usageError(`-o/--output must be human, json or template=<fmt> (got "${given}")`);
  const maxRedirects = Number(flags.maxRedirects ?? '5');
  if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0 || maxRedirects > 50) throw usageError('--max-redirects must be an integer 0..50');
  let stored: string | null | undefined;
  const tokenSource = flags.token !== undefined && flags.token !== '' ? (tokenFromEnv ? 'env' : 'flag') : 'store';
  return {
    env,
    io,
    profileName,
    profile,
    url: normalizeUrl(flags.url ?? profile?.url ?? DEFAULT_URL, '--url'),
    adminUrl: normalizeUrl(flags.adminUrl ?? profile?.adminUrl ?? DEFAULT_ADMIN_URL, '--admin-url'),
    dsUrl: flags.dsUrl ?? profile?.dsUrl ?? null,
    output,
    template,
    maxRedirects,
    get tokenSource() {
      if (tokenSource !== 'store') return tokenSource;
      return this.token() === null ? 'none' : 'store';
    },
    token() {
      if (tokenSource !== 'store') return flags.token!;
      if (stored === undefined) {
        try {
          stored = tokenStore(env).get(profileName);
        } catch (err) {
          if (!useKeyring(env)) throw err; // the file store's refusals (permissions) must be seen
          // No keyring service here: act as if nothing were stored (a node with auth off needs
          // no token); `svc login` reports the keyring problem when it is asked to store one.
          stored = null;
        }
      }
      return stored;
    },
  };
}
