/**
 * The logger interface every program codes against (svc, svc-cache, svc-connectors). Its shape is
 * pino's: the fields first, the message last, so the node's pino logger (src/log.ts, the only
 * importer of pino) is one without an adapter, and a line reads the same in all three programs:
 *
 *   log.info('stopped')
 *   log.warn({ bucket, key, err }, 'origin HEAD failed')
 *
 * Loggers are injected; a module or a connection takes a child with its own bindings.
 */

/** Fields merged into every line of a child logger, e.g. `{ module: 'gateway' }`. */
export type LogBindings = Record<string, unknown>;

export interface LogFn {
  (msg: string): void;
  /** `obj` is merged into the line; put an Error under `err` to get its message (and stack, where the program logs stacks). */
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

/** The two call forms of a LogFn as (fields, message), for loggers that are not pino. */
export function logArgs(a: string | object, b?: string): { fields: LogBindings; msg: string } {
  return typeof a === 'string' ? { fields: {}, msg: a } : { fields: a as LogBindings, msg: b ?? '' };
}
