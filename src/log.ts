/**
 * The product's logger: pino, JSON lines on stdout. This is the only file that imports
 * pino; everything else sees the narrow `Logger` interface (src/program/logger.ts, shared
 * with svc-cache and svc-connectors) and gets a logger injected (child loggers per module
 * and per connection).
 */
import pino from 'pino';
import { type Config } from './config';
import { type LogDestination, type Logger } from './program';

export type LogLevel = Config['logLevel'];

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
