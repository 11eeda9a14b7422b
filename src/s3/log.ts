/**
 * svc-cache's logger: JSON lines on stdout. It implements the logger interface every program
 * shares (src/program/logger.ts: fields first, message last, as pino takes them); pino itself is
 * the node's (src/log.ts), so this is a deliberately small writer of the same lines.
 */
import { logArgs, type LogBindings, type Logger } from '../program';

export type { Logger };

export const LEVELS = ['error', 'warn', 'info', 'debug', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, silent: -1 };

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l), bindings: LogBindings = {}): Logger {
  const max = RANK[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (a: string | object, b?: string) => {
    if (RANK[lvl] > max) return;
    const { fields, msg } = logArgs(a, b);
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries({ ...bindings, ...fields })) extra[k] = v instanceof Error ? { message: v.message, stack: v.stack } : v;
    write(JSON.stringify({ level: lvl, time: Date.now(), name: 'svc-cache', msg, ...extra }) + '\n');
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: (more) => createLogger(level, write, { ...bindings, ...more }) };
}
