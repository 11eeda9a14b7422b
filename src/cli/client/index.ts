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
  profile: 'client: named node addresses (create, use, list, delete)',
  login: 'client: store a token for the current profile',
  logout: "client: remove the profile's stored token",
  whoami: 'client: the token in use, its id and scope',
  create: 'client: create a stream',
  append: 'client: append records (argument or stdin)',
  read: 'client: read records',
  tail: 'client: follow a stream live',
  head: "client: a stream's metadata",
  ls: 'client: list streams',
  rm: 'client: delete a stream',
  trim: 'client: drop records below a seq',
  seal: 'client: seal a stream',
  schema: 'client: schema registry (put, get, ls, rm)',
  config: "client: a stream's config (get, patch)",
  token: 'client: access tokens (issue, ls, revoke)',
  cluster: 'client: cluster status, nodes, transfers',
  bench: 'client: load test (append, read)',
  completion: 'client: shell completion script (bash, zsh)',
};

function clientIo(io: CliIo): ClientIo {
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    stdoutIsTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
    columns: process.stdout.columns || 100,
  };
}

/** The client's entries for the `svc` command table. */
export function clientCommands(env: NodeJS.ProcessEnv = process.env): Command[] {
  return Object.entries(SUMMARIES).map(([name, summary]) => ({
    name,
    summary,
    ownHelp: true,
    usage: () => `Run \`svc ${name} --help\`.\n`,
    run: (args: string[], io: CliIo) => runClient([name, ...args], clientIo(io), env),
  }));
}

export { runClient } from './program';
export { EXIT } from './errors';
