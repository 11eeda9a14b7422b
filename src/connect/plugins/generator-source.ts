/**
 * `libsvc_connector_generator_source`: generates JSON records for load tests and demos:
 * `{"seq":n,"time":ms,"payload":"…"}`. Checkpoint: the next sequence number, so a restart
 * continues where the acknowledged records end. plugin_config: `rate` (records/s, 0 = as fast
 * as possible; default 10), `count` (stop after this many, 0 = never; default 0),
 * `payload_bytes` (default 16).
 */
import type { PluginContext, SourceBatch, SourcePlugin, SourceRecord } from '../plugin-api';

export function createSource(): SourcePlugin {
  let next = 0;
  let pending: number | null = null;
  let rate = 10;
  let count = 0;
  let payload = '';
  let started = Date.now();
  let startSeq = 0;
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>, state: Buffer | null) {
      rate = typeof config.rate === 'number' ? config.rate : 10;
      count = typeof config.count === 'number' ? config.count : 0;
      payload = 'x'.repeat(typeof config.payload_bytes === 'number' ? config.payload_bytes : 16);
      next = state === null ? 0 : Number((JSON.parse(state.toString('utf8')) as { next: number }).next);
      started = Date.now();
      startSeq = next;
    },
    async poll(max: number, timeoutMs: number): Promise<SourceBatch | null> {
      let n = max;
      if (count > 0) n = Math.min(n, count - next);
      if (rate > 0) {
        const due = Math.floor(((Date.now() - started) / 1000) * rate) - (next - startSeq);
        n = Math.min(n, due);
      }
      if (n <= 0) {
        await new Promise((r) => setTimeout(r, Math.min(timeoutMs, rate > 0 ? Math.ceil(1000 / rate) : timeoutMs)));
        return null;
      }
      const records: SourceRecord[] = [];
      const now = Date.now();
      for (let i = 0; i < n; i++) records.push({ key: null, value: Buffer.from(JSON.stringify({ seq: next + i, time: now, payload })) });
      pending = next + n;
      return { records, state: Buffer.from(JSON.stringify({ next: pending })) };
    },
    async commit(ack: boolean) {
      if (ack && pending !== null) next = pending;
      pending = null;
    },
    async close() {},
  };
}
