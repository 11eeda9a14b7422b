/**
 * Native plugins (C ABI of sdk/svc_connector.h) as SinkPlugin / SourcePlugin. By default each
 * connector's library runs in its own supervised host process (host-client.ts); with
 * isolation = "in_process" it is called directly in the runtime (a crash there ends the
 * runtime, as the spec's "a plugin panic aborts the whole process").
 */
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord, SourceBatch, SourcePlugin } from '../plugin-api';
import { decodeSourceBatch, encodeSinkBatch } from './batch-codec';
import { HostClient, PluginHostError } from './host-client';
import type { HostRequest, HostResults } from './host-protocol';
import { NativeCalls } from './native-calls';

export { PluginHostError };

const LEVELS = ['error', 'warn', 'info', 'debug'] as const;
const STATUS: Record<number, RecordResult> = { 0: { status: 'ok' }, 1: { status: 'retryable', message: 'plugin reported retryable' }, 2: { status: 'permanent', message: 'plugin reported permanent' } };

type Caller = <K extends HostRequest['op']>(req: Extract<HostRequest, { op: K }>) => Promise<HostResults[K]>;

let nextInProcessId = 1;

/** Most time for forking the host and loading the library, ms (not the plugin's call: not under plugin_timeout). */
const LOAD_MS = 60_000;

function caller(file: string, isolation: 'process' | 'in_process', timeoutMs: number, ctx: () => PluginContext | null): { call: Caller; load: Caller; id: number; end: () => void } {
  const log = (level: number, msg: string): void => ctx()?.log(LEVELS[level] ?? 'info', msg);
  if (isolation === 'in_process') {
    const calls = new NativeCalls((_id, level, msg) => log(level, msg));
    return { call: async (req) => calls.run(req), load: async (req) => calls.run(req), id: nextInProcessId++, end: () => undefined };
  }
  const host = new HostClient(file, log);
  return { call: (req) => host.call(req, timeoutMs), load: (req) => host.call(req, LOAD_MS), id: 1, end: () => host.kill() };
}

export function createNativeSink(file: string, isolation: 'process' | 'in_process', timeoutMs: number): SinkPlugin {
  let context: PluginContext | null = null;
  const { call, load, id, end } = caller(file, isolation, timeoutMs, () => context);
  let loaded: Promise<unknown> | null = null;
  const ready = async (): Promise<void> => void (await (loaded ??= load({ op: 'sink.load', file })));
  return {
    ready,
    async open(ctx, config) {
      context = ctx;
      await ready();
      await call({ op: 'sink.open', id, config: Buffer.from(JSON.stringify(config)) });
    },
    async write(records: SinkRecord[]) {
      const statuses = await call({ op: 'sink.write', id, batch: encodeSinkBatch(records), count: records.length });
      return Array.from(statuses, (s) => STATUS[s] ?? { status: 'permanent' as const, message: `plugin reported unknown status ${s}` });
    },
    async flush() {
      await call({ op: 'sink.flush', id });
    },
    async close() {
      try {
        await call({ op: 'sink.close', id });
      } finally {
        end();
      }
    },
  };
}

export function createNativeSource(file: string, isolation: 'process' | 'in_process', timeoutMs: number): SourcePlugin {
  let context: PluginContext | null = null;
  const { call, load, id, end } = caller(file, isolation, timeoutMs, () => context);
  let loaded: Promise<unknown> | null = null;
  const ready = async (): Promise<void> => void (await (loaded ??= load({ op: 'source.load', file })));
  return {
    ready,
    async open(ctx, config, state) {
      context = ctx;
      await ready();
      await call({ op: 'source.open', id, config: Buffer.from(JSON.stringify(config)), state: state ?? Buffer.alloc(0) });
    },
    async poll(max: number, timeoutMs2: number): Promise<SourceBatch | null> {
      const b = await call({ op: 'source.poll', id, max, timeoutMs: timeoutMs2 });
      return b === null ? null : decodeSourceBatch(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    },
    async commit(ack: boolean) {
      await call({ op: 'source.commit', id, ack });
    },
    async close() {
      try {
        await call({ op: 'source.close', id });
      } finally {
        end();
      }
    },
  };
}
