/**
 * `svc profile create|use|list|delete`, `svc login`, `svc logout`, `svc whoami`. A profile
 * names the node's addresses; its token is kept by the token store (token-store.ts), never
 * in the profile file.
 */
import { type Command } from 'commander';
import { emit, table, fields } from '../output';
import { CliError, EXIT, usageError } from '../errors';
import { type Registry } from '../program';
import { checkProfileName, normalizeUrl, readProfiles, writeProfiles, type Profile } from '../profiles';
import { tokenStore } from '../token-store';
import { sendJson } from '../http';
import { DEFAULT_ADMIN_URL, DEFAULT_URL, type Context } from '../context';

/** The id inside a wire token `BASE64URL(id).BASE64URL(secret)` (docs/auth.md), or null. */
export function tokenId(token: string): string | null {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token.trim());
  if (!m) return null;
  return Buffer.from(m[1]!, 'base64url').toString('utf8');
}

/** Asks for the token on a terminal without echoing it (stdin in raw mode, read to Enter). */
function promptHidden(ctx: Context, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let text = '';
    ctx.io.stderr(question);
    stdin.setRawMode(true);
    stdin.resume();
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      ctx.io.stderr('\n');
      if (err) reject(err);
      else resolve(text.trim());
    };
    const onData = (d: Buffer) => {
      for (const ch of d.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(usageError('interrupted'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function readStdinLine(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

export function registerProfiles(program: Command, { action }: Registry): void {
  const profile = program.command('profile').description('named node addresses');
  profile
    .command('create')
    .description('create or replace a profile (and make it current with --use)')
    .argument('<name>')
    .option('--use', 'make it the current profile')
    .addHelpText('after', `\nThe addresses are the global flags: --url (default ${DEFAULT_URL}), --admin-url (default ${DEFAULT_ADMIN_URL}), --ds-url.`)
    .action(
      action(async (ctx, [name], o) => {
        checkProfileName(String(name));
        const p: Profile = { url: normalizeUrl(String(o['url'] ?? DEFAULT_URL), '--url'), adminUrl: normalizeUrl(String(o['adminUrl'] ?? DEFAULT_ADMIN_URL), '--admin-url') };
        if (o['dsUrl'] !== undefined) p.dsUrl = normalizeUrl(String(o['dsUrl']), '--ds-url');
        const doc = readProfiles(ctx.env);
        doc.profiles[String(name)] = p;
        if (o['use'] || doc.current === null) doc.current = String(name);
        writeProfiles(ctx.env, doc);
        emit(ctx, { name, ...p, current: doc.current === name }, () => `profile ${String(name)} saved${doc.current === name ? ' (current)' : ''}\n`);
      }),
    );
  profile
    .command('use')
    .description('make a profile current')
    .argument('<name>')
    .action(
      action(async (ctx, [name]) => {
        const doc = readProfiles(ctx.env);
        if (!(String(name) in doc.profiles)) throw new CliError(`no profile "${String(name)}"`, EXIT.notFound);
        doc.current = String(name);
        writeProfiles(ctx.env, doc);
        emit(ctx, { current: name }, () => `using profile ${String(name)}\n`);
      }),
    );
  profile
    .command('list')
    .alias('ls')
    .description('list profiles')
    .action(
      action(async (ctx) => {
        const doc = readProfiles(ctx.env);
        const rows = Object.entries(doc.profiles).map(([name, p]) => ({ current: doc.current === name ? '*' : '', name, url: p.url, adminUrl: p.adminUrl, dsUrl: p.dsUrl ?? null }));
        emit(ctx, doc, () => (rows.length === 0 ? 'no profiles (svc profile create <name> --url … --admin-url …)\n' : table(rows, ['current', 'name', 'url', 'adminUrl', 'dsUrl'], ctx.io.columns)));
      }),
    );
  profile
    .command('delete')
    .alias('rm')
    .description('delete a profile and its stored token')
    .argument('<name>')
    .action(
      action(async (ctx, [name]) => {
        const doc = readProfiles(ctx.env);
        if (!(String(name) in doc.profiles)) throw new CliError(`no profile "${String(name)}"`, EXIT.notFound);
        delete doc.profiles[String(name)];
        if (doc.current === name) doc.current = null;
        writeProfiles(ctx.env, doc);
        try {
          tokenStore(ctx.env).delete(String(name));
        } catch {
          // no keyring here: there is nothing stored in it either
        }
        emit(ctx, { deleted: name }, () => `deleted profile ${String(name)}\n`);
      }),
    );

  program
    .command('login')
    .description("store a token for the profile (OS keyring; SVC_NO_KEYRING=1: a private file)")
    .argument('[token]', 'the wire token; without it, read from stdin (asked for, not echoed, on a terminal)')
    .action(
      action(async (ctx, [arg]) => {
        const token = arg !== undefined ? String(arg) : process.stdin.isTTY ? await promptHidden(ctx, `Token for profile ${ctx.profileName}: `) : await readStdinLine();
        if (token === '') throw usageError('give the token as an argument or on stdin (svc login < token.txt)');
        const id = tokenId(token);
        if (id === null) throw usageError('that is not a token (expected BASE64URL(id).BASE64URL(secret))');
        const store = tokenStore(ctx.env);
        store.set(ctx.profileName, token);
        emit(ctx, { profile: ctx.profileName, tokenId: id, store: store.where }, () => `logged in to profile ${ctx.profileName} as ${id} (token kept in the ${store.where})\n`);
      }),
    );
  program
    .command('logout')
    .description("remove the profile's stored token")
    .action(
      action(async (ctx) => {
        const store = tokenStore(ctx.env);
        const had = store.delete(ctx.profileName);
        emit(ctx, { profile: ctx.profileName, removed: had }, () => (had ? `logged out of profile ${ctx.profileName}\n` : `no token stored for profile ${ctx.profileName}\n`));
      }),
    );
  program
    .command('whoami')
    .description('the token in use: its id, where it came from, and its scope')
    .action(action(async (ctx) => whoami(ctx)));
}

async function whoami(ctx: Context): Promise<void> {
  const token = ctx.token();
  const source = ctx.tokenSource;
  if (token === null) {
    emit(ctx, { profile: ctx.profileName, tokenId: null, source: 'none' }, () => `profile ${ctx.profileName}: no token (requests are anonymous)\n`);
    return;
  }
  const id = tokenId(token);
  // The scope is the token's own record, when the token may list itself (GET /admin/tokens).
  let scope: unknown = null;
  try {
    const list = await sendJson<{ tokens: { id: string; scope: unknown }[] }>(ctx, 'admin', '/admin/tokens');
    scope = list.tokens.find((t) => t.id === id)?.scope ?? null;
  } catch (err) {
    if (!(err instanceof CliError) || err.exitCode !== EXIT.auth) throw err;
    if (err.status === 401) throw err; // the token itself is not accepted
  }
  const out = { profile: ctx.profileName, tokenId: id, source, url: ctx.url, adminUrl: ctx.adminUrl, scope };
  emit(ctx, out, () => fields({ ...out, scope: scope === null ? '(not visible to this token)' : JSON.stringify(scope) }));
}
