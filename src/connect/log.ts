/**
 * svc-connectors' logger: one line per event on stdout, `text` or `json` ([logging] format).
 * The level comes from RUST_LOG as the spec says (default info); `SVC_CONNECTORS_LOG` is accepted
 * as an alias when RUST_LOG is unset. RUST_LOG's directive syntax is understood far enough for
 * real use: `debug`, `svc_connectors=debug,warn` (the directive for svc_connectors wins, then a
 * bare level). Fields whose names look secret are redacted (src/connect/redact.ts). It implements
 * the logger interface every program shares (src/program/logger.ts: fields first, message last).
 */
import { logArgs, type Logger } from '../program';
import { redact } from './redact';

export const LEVELS = ['error', 'warn', 'info', 'debug', 'trace', 'off'] as const;
export type LogLevel = (typeof LEVELS)[number];
export type LogFormat = 'text' | 'json';

export type { Logger };

const RANK: Record<LogLevel, number> = { off: -1, error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

/** The level RUST_LOG (or its alias) asks for; unknown text falls back to info. */
export function levelFromEnv(env: NodeJS.ProcessEnv): LogLevel {
  const spec = (env.RUST_LOG ?? env.SVC_CONNECTORS_LOG ?? '').trim().toLowerCase();
  if (spec === '') return 'info';
  let bare: LogLevel | null = null;
  for (const part of spec.split(',')) {
    const [target, lvl] = part.includes('=') ? part.split('=', 2) : [null, part];
    const level = (LEVELS as readonly string[]).includes(lvl!.trim()) ? (lvl!.trim() as LogLevel) : null;
    if (level === null) continue;
    if (target !== null && /^svc[_-]connectors/.test(target.trim())) return level;
    if (target === null) bare = level;
  }
  return bare ?? 'info';
}

/** Receives every emitted event as well (OTLP export). */
export type LogTap = (level: string, msg: string, fields: Record<string, unknown>) => void;

export function createLogger(level: LogLevel, format: LogFormat, write: (line: string) => void = (l) => process.stdout.write(l), base: Record<string, unknown> = {}, tap: { fn: LogTap | null } = { fn: null }): Logger & { tap: { fn: LogTap | null } } {
  const max = RANK[level];
  const at = (lvl: 'error' | 'warn' | 'info' | 'debug') => (a: string | object, b?: string) => {
    if (RANK[lvl] > max) return;
    const { fields, msg } = logArgs(a, b);
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries({ ...base, ...fields })) extra[k] = v instanceof Error ? v.message : v;
    const safe = redact(extra) as Record<string, unknown>;
    tap.fn?.(lvl, msg, safe);
    if (format === 'json') write(JSON.stringify({ level: lvl, time: new Date().toISOString(), name: 'svc-connectors', msg, ...safe }) + '\n');
    else {
      const kv = Object.entries(safe).map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`);
      write(`${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} ${msg}${kv.length ? ' ' + kv.join(' ') : ''}\n`);
    }
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: (f) => createLogger(level, format, write, { ...base, ...f }, tap), tap };
}
