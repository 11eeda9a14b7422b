/**
 * The three programs' loggers implement one interface (src/program/logger.ts): a message alone,
 * or fields first and the message last, and child loggers whose bindings go on every line.
 */
import { createLogger as nodeLogger } from '../../src/log';
import { createLogger as cacheLogger } from '../../src/s3/log';
import { createLogger as connectorsLogger } from '../../src/connect/log';
import { type Logger } from '../../src/program';

type Make = (level: 'debug' | 'warn', write: (line: string) => void) => Logger;

function collect(make: Make, level: 'debug' | 'warn' = 'debug'): { log: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  return { log: make(level, (l) => void out.push(l)), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const programs: [string, Make][] = [
  ['svc (pino)', (level, write) => nodeLogger(level, { write })],
  ['svc-cache', (level, write) => cacheLogger(level, write)],
  ['svc-connectors (json)', (level, write) => connectorsLogger(level, 'json', write)],
];

describe.each(programs)('%s', (_name, make) => {
  it('logs a message alone, and fields first with the message last', () => {
    const { log, lines } = collect(make);
    log.info('started');
    log.warn({ bucket: 'b', attempt: 2 }, 'origin HEAD failed');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 'info', msg: 'started' }),
      expect.objectContaining({ level: 'warn', msg: 'origin HEAD failed', bucket: 'b', attempt: 2 }),
    ]);
  });

  it('puts a child logger\'s bindings on every line, and an Error under err with its message', () => {
    const { log, lines } = collect(make);
    log.child({ component: 'api' }).error({ err: new Error('boom') }, 'request failed');
    const [line] = lines();
    expect(line).toMatchObject({ level: 'error', msg: 'request failed', component: 'api' });
    expect(JSON.stringify(line!.err)).toContain('boom');
  });

  it('drops lines below its level', () => {
    const { log, lines } = collect(make, 'warn');
    log.debug({ a: 1 }, 'hidden');
    log.info('hidden');
    log.warn('shown');
    expect(lines().map((l) => l.msg)).toEqual(['shown']);
  });
});
