/**
 * Command dispatch for the `svc` binary: a table of commands, each with its own usage
 * text and `run`. `serve` starts a node (wired in main.ts); client commands are added to
 * the table the same way.
 *
 * Exit codes: 0 success, 1 runtime failure, 2 usage error (unknown command or flag,
 * invalid configuration).
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Output channels, injected so dispatch is testable without a process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface Command {
  /** The word after `svc`, e.g. `serve`. */
  readonly name: string;
  /** One line for the command list in `svc --help`. */
  readonly summary: string;
  /** Full usage text for `svc <name> --help` (a promise when the text needs modules loaded). */
  usage(): string | Promise<string>;
  /** Heading the command is listed under in `svc --help` (default "Commands"). */
  readonly group?: string;
  /** True when `run` prints its own `--help` (the client commands' parser does). */
  readonly ownHelp?: boolean;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(args: string[], io: CliIo): Promise<number>;
}

export interface Program {
  readonly name: string;
  readonly version: string;
  readonly commands: readonly Command[];
  /** A command whose full usage `svc --help` appends to the command list. */
  readonly featured?: string;
}

const HELP = new Set(['--help', '-h']);
const VERSION = new Set(['--version', '-V']);

/** `svc --help`: the command list. */
export function programUsage(program: Program): string {
  // Commands without a group come first under "Commands:", then each group under its title.
  const groups = new Map<string, Command[]>();
  for (const c of program.commands) groups.set(c.group ?? 'Commands', [...(groups.get(c.group ?? 'Commands') ?? []), c]);
  const lines = [`Usage: ${program.name} <command> [flags]`, ''];
  for (const [title, commands] of groups) {
    const width = Math.max(...commands.map((c) => c.name.length));
    lines.push(`${title}:`, ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`), '');
  }
  lines.push(
    `Run \`${program.name} <command> --help\` for a command's flags.`,
    `${program.name} --version prints the version.`,
  );
  return lines.join('\n') + '\n';
}

/** Whether the arguments or the environment ask for JSON output (`-o json`, `--output=json`, `SVC_OUTPUT=json`). */
export function wantsJson(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--output=json' || a === '-ojson' || ((a === '-o' || a === '--output') && argv[i + 1] === 'json')) return true;
  }
  return env['SVC_OUTPUT'] === 'json';
}

/** Dispatch `argv` (without node and script path) to a command; resolves to the exit code. */
export async function dispatch(program: Program, argv: readonly string[], io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr(programUsage(program));
    return EXIT_USAGE;
  }
  if (HELP.has(first) || first === 'help') {
    const target = program.commands.find((c) => c.name === rest[0]);
    if (target?.ownHelp) return target.run([...rest.slice(1), '--help'], io);
    const featured = program.commands.find((c) => c.name === program.featured);
    io.stdout(target ? await target.usage() : programUsage(program) + (featured ? '\n' + (await featured.usage()) : ''));
    return EXIT_OK;
  }
  if (VERSION.has(first)) {
    io.stdout(`${program.name} ${program.version}\n`);
    return EXIT_OK;
  }
  const command = program.commands.find((c) => c.name === first);
  if (!command) {
    // With `-o json` (or SVC_OUTPUT=json) every error is one JSON object (docs/cli.md), this one too.
    if (wantsJson(argv, env)) io.stderr(JSON.stringify({ status: null, error: 'usage', message: `unknown command "${first}"`, exitCode: EXIT_USAGE }) + '\n');
    else io.stderr(`${program.name}: unknown command "${first}"\n\n${programUsage(program)}`);
    return EXIT_USAGE;
  }
  if (!command.ownHelp && rest.some((a) => HELP.has(a))) {
    io.stdout(await command.usage());
    return EXIT_OK;
  }
  return command.run(rest, io);
}
