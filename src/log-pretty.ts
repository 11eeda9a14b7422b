/**
 * The node's human-readable log line (`--log-format pretty`, or `auto` on a terminal; docs/logs.md):
 *
 *   08:54:07.508 INFO  request answered with an error requestId=6b1206d539b1ee24 status=404
 *
 * time (UTC, no date: a person at a terminal reads it now), level, message, then the fields as
 * key=value; an `err` shows its message inline and its stack on the lines below.
 *
 * A hand formatter over pino's own JSON line rather than pino-pretty: this is a few dozen lines,
 * pino-pretty brings a dozen packages (and its transport worker) for options the node does not use,
 * and formatting the line pino already built keeps redaction and serializers in one place. Parsing
 * the line again costs, but only on a terminal, where a person reads at a person's pace.
 */

const LEVEL_COLOUR: Record<string, string> = { fatal: '35', error: '31', warn: '33', info: '32', debug: '36', trace: '90' };
/** Fields a person does not need on each line: the time and level lead the line, the pid is one process's. */
const SKIP = new Set(['time', 'level', 'msg', 'pid', 'hostname']);

/** A value as `key=value` prints it: plain when it is a simple word, JSON (quoted) otherwise. */
function show(v: unknown): string {
  if (typeof v === 'string') return /^[\w./:@+-]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}

interface SerializedError {
  message?: unknown;
  stack?: unknown;
}

/** One pino JSON line (with or without its newline) as a readable line; a line that is not JSON passes through. */
export function prettyLine(json: string, colour: boolean): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof o['time'] === 'string' ? o['time'].slice(11, 23) : new Date().toISOString().slice(11, 23);
  const level = String(o['level'] ?? 'info');
  const label = level.toUpperCase().padEnd(5);
  const head = colour ? `\x1b[2m${time}\x1b[0m \x1b[${LEVEL_COLOUR[level] ?? '0'}m${label}\x1b[0m` : `${time} ${label}`;
  let line = `${head} ${String(o['msg'] ?? '')}`;
  let stack = '';
  for (const [k, v] of Object.entries(o)) {
    if (SKIP.has(k) || v === undefined) continue;
    if (k === 'err' && v !== null && typeof v === 'object') {
      const e = v as SerializedError;
      line += ` err=${show(e.message ?? '')}`;
      if (typeof e.stack === 'string') stack = e.stack.split('\n').slice(1).map((s) => `    ${s.trim()}\n`).join('');
      continue;
    }
    line += colour ? ` \x1b[2m${k}=\x1b[0m${show(v)}` : ` ${k}=${show(v)}`;
  }
  return `${line}\n${stack}`;
}
