/**
 * The product's logger: pino, JSON lines on stdout. This is the only file that imports
 * pino; everything else sees the narrow `Logger` interface and gets a logger injected
 * (child loggers per module and per connection).
 */
import pino from 'pino';
import { type Config } from './config';

export type LogLevel = Config['logLevel'];

/** Fields merged into every line of a child logger, e.g. `{ module: 'gateway' }`. */
export type LogBindings = Record<string, unknown>;

export interface LogFn {
  (msg: string): void;
  /** `obj` is merged into the line; put an Error under `err` to get its stack. */
  (obj: object, msg?: string): void;
}

export interface Logger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  child(bindings: LogBindings): Logger;
}

/** Where lines go; anything with `write(line)`, e.g. a test collector. */
export interface LogDestination {
  write(line: string): void;
}

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
];

/**
 * A JSON-lines logger at `level`, writing to stdout unless `destination` is given.
 * Writes to stdout are synchronous so lines logged right before `process.exit` are kept.
 */
export function createLogger(level: LogLevel, destination?: LogDestination): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
