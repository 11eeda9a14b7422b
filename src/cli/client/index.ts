/**
 * Front door of the command-line client: the client commands as entries of the `svc`
 * dispatch table (src/cli/commands.ts). Each entry hands its arguments to the commander
 * program (program.ts), which parses them and prints its own help.
 *
 * The client talks to nodes over HTTP only; it imports nothing of the node (eslint enforces it).
 */
import { type CliIo, type Command } from '../commands';
import { runClient } from './program';
import { type ClientIo } from './context';

const SUMMARIES: Record<string, string> = {
  profile: 'named node addresses (create, use, list, delete)',
  login: 'store a token for the current profile',
  logout: "remove the profile's stored token",
  whoami: 'the token in use, its id and scope',
  create: 'create a stream',
  append: 'append records (argument or stdin)',
  read: 'read records',
  tail: 'follow streams live (--group: resume where it stopped)',
  head: "a stream's metadata",
  ls: 'list streams',
  rm: 'delete a stream',
  trim: 'drop records below a seq',
  seal: 'seal a stream',
  schema: 'schema registry (put, get, ls, rm)',
  config: "a stream's config (get, patch)",
  token: 'access tokens (issue, ls, revoke, bootstrap)',
  cluster: 'cluster status, nodes, transfers',
  groups: 'consumer and share groups (ls, describe)',
  bench: 'load test (append, read)',
  completion: 'shell completion script (bash, zsh)',
};

function clientIo(io: CliIo): ClientIo {
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    stdoutIsTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
    columns: process.stdout.columns || 100,
    drain: () => (process.stdout.writableNeedDrain ? new Promise((r) => process.stdout.once('drain', r)) : Promise.resolve()),
  };
}

/**
 * A reader that goes away (`svc read … | head`) closes the pipe: stop quietly with exit 0,
 * as the output wanted was delivered, instead of dying on an unhandled EPIPE.
 */
function quietOnClosedStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

/** The client's entries for the `svc` command table. */
export function clientCommands(env: NodeJS.ProcessEnv = process.env): Command[] {
  return Object.entries(SUMMARIES).map(([name, summary]) => ({
    name,
    summary,
    group: 'Client commands (docs/cli.md)',
    ownHelp: true,
    usage: () => `Run \`svc ${name} --help\`.\n`,
    run: (args: string[], io: CliIo) => {
      quietOnClosedStdout();
      return runClient([name, ...args], clientIo(io), env);
    },
  }));
}

export { runClient } from './program';
export { EXIT } from './errors';
