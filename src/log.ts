/**
 * The product's logger: pino, JSON lines on stdout, or readable lines on a terminal
 * (`--log-format`, src/log-pretty.ts). This is the only file that imports
 * pino; everything else sees the narrow `Logger` interface (src/program/logger.ts, shared
 * with svc-cache and svc-connectors) and gets a logger injected (child loggers per module
 * and per connection).
 */
import pino from 'pino';
import { type Config } from './config';
import { prettyLine } from './log-pretty';
import { type LogDestination, type Logger } from './program';

export type LogLevel = Config['logLevel'];
export type LogFormat = Config['logFormat'];

export type { LogBindings, LogDestination, LogFn, Logger } from './program';

/**
 * Secrets never reach the log: bearer tokens in request headers (whatever object they
 * are logged under) and any `token` field. The bootstrap token and issued wire tokens are
 * logged, if at all, under `token`.
 */
const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'token',
  '*.token',
  'config.authBootstrapToken',
  'config.metadataPassword',
];

/** `auto` is pretty on a terminal (a person reads it) and JSON elsewhere (a collector parses it). */
export function resolveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}

/**
 * A logger at `level`, writing to stdout unless `destination` is given: JSON lines, or with
 * `format` pretty (or auto on a terminal) readable ones, coloured on a terminal unless NO_COLOR is set.
 * Writes to stdout are synchronous so lines logged right before `process.exit` are kept.
 */
export function createLogger(level: LogLevel, destination?: LogDestination, format: LogFormat = 'json'): Logger {
  const tty = destination === undefined && process.stdout.isTTY === true;
  const out: LogDestination = destination ?? pino.destination({ dest: 1, sync: true });
  const colour = tty && (process.env['NO_COLOR'] ?? '') === '';
  const sink: LogDestination = resolveLogFormat(format, tty) === 'pretty' ? { write: (line) => out.write(prettyLine(line, colour)) } : out;
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    sink,
  );
}
