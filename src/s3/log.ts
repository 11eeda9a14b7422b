/**
 * svc-cache's logger: JSON lines on stdout. The node's logger lives outside src/s3 (and this
 * program imports only src/util), so this is a deliberately small one with the same shape.
 */
export const LEVELS = ['error', 'warn', 'info', 'debug', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, silent: -1 };

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const max = RANK[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] > max) return;
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields ?? {})) extra[k] = v instanceof Error ? { message: v.message, stack: v.stack } : v;
    write(JSON.stringify({ level: lvl, time: Date.now(), name: 'svc-cache', msg, ...extra }) + '\n');
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
