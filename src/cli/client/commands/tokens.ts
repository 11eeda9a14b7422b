/**
 * `svc token issue|ls|revoke` against the admin API (docs/auth.md). The scope comes from a JSON
 * file, or is built from flags: `--prefix /orders/ --ops read,append --audiences svc`.
 */
import { type Command } from 'commander';
import { jsonBody, send, sendJson } from '../http';
import { emit, table } from '../output';
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CliError, EXIT, usageError } from '../errors';
import { type Registry } from '../program';
import { collect, readInput } from '../args';

const READ_OPS = ['read', 'head', 'list'];
const WRITE_OPS = ['create', 'append', 'trim', 'close', 'delete'];

/** `--groups stream=rw,tokens=r,admin=` into the scope's groups object. */
function groups(text: string | undefined, ops: string[]): Record<string, { read: boolean; write: boolean }> {
  const out: Record<string, { read: boolean; write: boolean }> = {};
  if (text === undefined) {
    // Derived from the ops: the stream group gets the sides its ops need.
    out['stream'] = { read: ops.some((o) => READ_OPS.includes(o)), write: ops.some((o) => WRITE_OPS.includes(o)) };
    out['tokens'] = { read: ops.includes('list_tokens'), write: ops.includes('issue_token') || ops.includes('revoke_token') };
    out['admin'] = { read: ops.some((o) => ['cluster_read', 'node_read', 'stream_inspect'].includes(o)), write: ops.some((o) => ['transfer_stream', 'update_node_slots'].includes(o)) };
    // The schema registry's group, only for tokens that hold its operations (docs/schema-registry.md).
    if (ops.some((o) => o.startsWith('schema_'))) out['schemas'] = { read: ops.includes('schema_read'), write: ops.some((o) => ['schema_write', 'schema_delete', 'schema_config'].includes(o)) };
    return out;
  }
  for (const part of text.split(',').filter(Boolean)) {
    const [g, sides = ''] = part.split('=');
    if (!g || !/^[rw]*$/.test(sides)) throw usageError(`--groups takes group=rw pairs, e.g. stream=rw,tokens=r (got "${part}")`);
    out[g] = { read: sides.includes('r'), write: sides.includes('w') };
  }
  return out;
}

function expiry(o: Record<string, unknown>): number | null {
  if (o['expiresIn'] !== undefined) {
    const m = /^(\d+)([smhd])$/.exec(String(o['expiresIn']));
    if (!m) throw usageError('--expires-in takes a number and a unit s, m, h or d, e.g. 30d');
    return Date.now() + Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as 's' | 'm' | 'h' | 'd'];
  }
  return null;
}

/** Token ids (docs/auth.md, "Issue"): what the node accepts for a bootstrap token too. */
const TOKEN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * A wire token as the node parses it (docs/auth.md): BASE64URL(id) "." BASE64URL(32 random
 * bytes), no padding. The node stores only a SHA-256 of the secret when it bootstraps it.
 */
export function bootstrapToken(id: string): string {
  if (!TOKEN_ID.test(id) || id === 'anonymous') throw usageError(`a token id is 1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit, and not "anonymous" (got "${id}")`);
  return `${Buffer.from(id, 'utf8').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
}

const list = (v: unknown) => (v === undefined ? [] : String(v).split(',').map((s) => s.trim()).filter(Boolean));

export function registerTokens(program: Command, { action }: Registry): void {
  const token = program.command('token').description('issue, list and revoke access tokens (admin API); make a bootstrap token');
  token
    .command('bootstrap')
    .description('print a new bootstrap token for `svc serve --auth-bootstrap-token` (made here; nothing is sent)')
    .argument('[id]', 'token id: 1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', 'root')
    .option('--file <path>', 'write it to this new file (mode 0600) for --auth-bootstrap-token-file, instead of printing it')
    .action(
      action(async (ctx, [id], o) => {
        const wire = bootstrapToken(String(id));
        if (o['file'] !== undefined) {
          const path = String(o['file']);
          try {
            // `wx`: never overwrite a token file that may be in use.
            fs.writeFileSync(path, wire + '\n', { mode: 0o600, flag: 'wx' });
          } catch (err) {
            throw new CliError(`cannot write ${path}: ${(err as Error).message}`, EXIT.failure);
          }
          emit(ctx, { id, file: path }, () => `wrote the bootstrap token for "${String(id)}" to ${path}\n`);
          return;
        }
        emit(ctx, { id, token: wire }, () => wire + '\n');
      }),
    );
  token
    .command('issue')
    .description('issue a token; prints the wire token once')
    .argument('<id>', 'token id: 1-128 of A-Z a-z 0-9 . _ : -')
    .option('--scope-file <file>', 'the whole scope as JSON ("-" reads stdin)')
    .option('--prefix <prefix>', 'streams matcher {prefix}, repeatable', collect)
    .option('--stream <name>', 'streams matcher {exact}, repeatable', collect)
    .option('--token-prefix <prefix>', 'tokens matcher {prefix}, repeatable', collect)
    .option('--ops <list>', 'operations, comma-separated', 'read,head,list')
    .option('--groups <list>', 'group sides, e.g. stream=rw,tokens=r (default: what the ops need)')
    .option('--audiences <list>', 'svc, durable_streams, admin, schema_registry', 'svc')
    .option('--auto-prefix', 'tenant prefixing (one --prefix)')
    .option('--expires-in <duration>', 'e.g. 12h, 30d')
    .action(
      action(async (ctx, [id], o) => {
        let scope: unknown;
        let reachesNoStream = false;
        if (o['scopeFile'] !== undefined) {
          try {
            scope = JSON.parse(await readInput(String(o['scopeFile'])));
          } catch (err) {
            throw usageError(`--scope-file: ${(err as Error).message}`);
          }
        } else {
          const ops = list(o['ops']);
          scope = {
            streams: [...((o['prefix'] as string[] | undefined) ?? []).map((p) => ({ prefix: p })), ...((o['stream'] as string[] | undefined) ?? []).map((s) => ({ exact: s }))],
            tokens: ((o['tokenPrefix'] as string[] | undefined) ?? []).map((p) => ({ prefix: p })),
            groups: groups(o['groups'] as string | undefined, ops),
            ops,
            audiences: list(o['audiences']),
            autoPrefixStreams: o['autoPrefix'] === true,
            expiresAtMs: expiry(o),
          };
          // A scope's streams list is an allow-list: stream ops with no matcher can reach nothing.
          reachesNoStream = (scope as { streams: unknown[] }).streams.length === 0 && ops.some((op) => READ_OPS.includes(op) || WRITE_OPS.includes(op));
        }
        const issued = await sendJson<{ id: string; token: string; scope: unknown; createdAtMs: number }>(ctx, 'admin', '/admin/tokens', { method: 'POST', ...jsonBody({ id, scope }) });
        emit(ctx, issued, () => `${issued.token}\n`);
        if (ctx.output !== 'json' && ctx.io.stderrIsTty) ctx.io.stderr(`issued token ${issued.id}; it is shown only once\n`);
        if (reachesNoStream) ctx.io.stderr(`svc: warning: token ${issued.id} has stream operations but no --prefix or --stream, so it can reach no stream (--prefix "" covers every stream)\n`);
      }),
    );
  token
    .command('ls')
    .description('list the tokens your scope covers (never their secrets)')
    .action(
      action(async (ctx) => {
        const doc = await sendJson<{ count: number; tokens: { id: string; scope: { ops?: string[]; audiences?: string[]; expiresAtMs?: number | null }; createdAtMs: number; issuedBy: string }[] }>(ctx, 'admin', '/admin/tokens');
        const rows = doc.tokens.map((t) => ({
          id: t.id,
          issuedBy: t.issuedBy,
          created: new Date(t.createdAtMs).toISOString(),
          expires: t.scope.expiresAtMs ? new Date(t.scope.expiresAtMs).toISOString() : 'never',
          audiences: (t.scope.audiences ?? []).join(','),
          ops: (t.scope.ops ?? []).join(','),
        }));
        emit(ctx, doc, () => (rows.length === 0 ? 'no tokens\n' : table(rows, ['id', 'issuedBy', 'created', 'expires', 'audiences', 'ops'], ctx.io.columns)));
      }),
    );
  token
    .command('revoke')
    .description('revoke a token (effective on the next request)')
    .argument('<id>')
    .action(
      action(async (ctx, [id]) => {
        await send(ctx, 'admin', `/admin/tokens/${encodeURIComponent(String(id))}`, { method: 'DELETE' });
        emit(ctx, { id, revoked: true }, () => `revoked ${String(id)}\n`);
      }),
    );
}
