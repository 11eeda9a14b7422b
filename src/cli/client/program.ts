/**
 * The client's command tree, parsed by commander (one parser for every client command; see
 * docs/cli.md for why commander). Global flags sit on the root and may be given before or
 * after the subcommand; each takes an `SVC_*` environment variable as fallback, and the
 * profile file after that (context.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { wantsJson } from '../commands';
import { CliError, EXIT, type ExitCode } from './errors';
import { makeContext, type ClientIo, type Context, type GlobalFlags } from './context';
import { registerStreams } from './commands/streams';
import { registerRead } from './commands/read';
import { registerAppend } from './commands/append';
import { registerSchemaConfig } from './commands/schema-config';
import { registerTokens } from './commands/tokens';
import { registerCluster } from './commands/cluster';
import { registerGroups } from './commands/groups';
import { registerProfiles } from './commands/profiles';
import { registerBench } from './commands/bench';
import { registerCompletion } from './commands/completion';

/** Wraps a command body: builds the context from the flags and runs it (errors are thrown to runClient). */
export type Action = (fn: (ctx: Context, args: unknown[], opts: Record<string, unknown>) => Promise<void>) => (...a: unknown[]) => Promise<void>;

export interface Registry {
  readonly action: Action;
}

/** What a run reports back besides throwing: its exit code and whether errors go out as JSON. */
export interface RunState {
  code: ExitCode;
  json: boolean;
  /** Parser messages (usage errors) collected instead of printed when the run wants JSON. */
  parserErrors: string[] | null;
}

export function buildProgram(io: ClientIo, env: NodeJS.ProcessEnv, state: RunState): Command {
  const program = new Command('svc');
  program
    .addOption(new Option('--profile <name>', 'profile to use (default: the current one)').env('SVC_PROFILE'))
    .addOption(new Option('--url <address>', 'protocol listener (default http://127.0.0.1:4437)').env('SVC_URL'))
    .addOption(new Option('--admin-url <address>', 'admin listener (default http://127.0.0.1:9090)').env('SVC_ADMIN_URL'))
    .addOption(new Option('--ds-url <address>', 'Durable Streams listener').env('SVC_DS_URL'))
    .addOption(new Option('--token <token>', 'access token (wins over the stored one)').env('SVC_TOKEN'))
    .addOption(new Option('-o, --output <format>', 'human, json, or template=<fmt> (read and tail: one line per record, docs/cli.md)').env('SVC_OUTPUT'))
    .addOption(new Option('--max-redirects <n>', 'most 307 hops to follow').env('SVC_MAX_REDIRECTS'))
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput(output(io, state));

  const action: Action = (fn) => async (...a: unknown[]) => {
    const cmd = a[a.length - 1] as Command;
    // A command's own options and the global ones together (its own win on a name clash).
    const opts = cmd.optsWithGlobals();
    const flags = opts as GlobalFlags;
    state.json = flags.output === 'json';
    const ctx = makeContext(flags, env, io, program.getOptionValueSource('token') === 'env');
    await fn(ctx, a.slice(0, -2), opts);
  };
  const reg: Registry = { action };
  registerProfiles(program, reg);
  registerStreams(program, reg);
  registerAppend(program, reg);
  registerRead(program, reg);
  registerSchemaConfig(program, reg);
  registerTokens(program, reg);
  registerCluster(program, reg);
  registerGroups(program, reg);
  registerBench(program, reg);
  registerCompletion(program, reg);
  // Every subcommand reports usage errors through the same override and output.
  const inherit = (c: Command) => {
    for (const sub of c.commands) {
      sub.exitOverride().configureOutput(output(io, state)).showHelpAfterError('(add --help for usage)');
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

function output(io: ClientIo, state: RunState) {
  return { writeOut: (s: string) => io.stdout(s), writeErr: (s: string) => (state.parserErrors ? state.parserErrors.push(s) : io.stderr(s)) };
}


/** Runs `svc <argv…>` for a client command; resolves to the exit code. */
export async function runClient(argv: readonly string[], io: ClientIo, env: NodeJS.ProcessEnv): Promise<number> {
  const state: RunState = { code: EXIT.ok, json: false, parserErrors: wantsJson(argv, env) ? [] : null };
  const program = buildProgram(io, env, state);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return state.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return EXIT.ok;
      // Plain output: commander already printed the message. JSON: one object, like other errors.
      if (state.parserErrors) io.stderr(JSON.stringify({ status: null, error: 'usage', message: err.message.replace(/^error: /, ''), exitCode: EXIT.usage }) + '\n');
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      io.stderr(state.json || (state.parserErrors !== null && err.exitCode === EXIT.usage) ? JSON.stringify({ status: err.status ?? null, ...(err.body ?? { error: err.exitCode === EXIT.usage ? 'usage' : 'client_error' }), message: err.body?.message ?? err.message, exitCode: err.exitCode }) + '\n' : `svc: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}
