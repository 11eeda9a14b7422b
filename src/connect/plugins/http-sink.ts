/**
 * `libsvc_connector_http_sink`: delivers records to an HTTP endpoint (webhook).
 *
 * plugin_config: `url` (required), `method` (POST), `headers` (table), `mode` = "batch"
 * (default: one request per `batch_size` records, body a JSON array of the values parsed as
 * JSON, or as strings when they are not JSON) or "record" (one request per record, body = the
 * value as is), `max_in_flight` (16 concurrent requests), `batch_size` (500 records per request
 * in batch mode), `timeout_ms` (10000 per request).
 *
 * Statuses: 2xx ok; 408, 429, 5xx and network errors retryable; other 4xx permanent (per record
 * in "record" mode, for the request's records in "batch" mode).
 *
 * Every request carries what a receiver needs to drop a repeat (delivery is at-least-once):
 * `Idempotency-Key: <topic>-<partition>-<offset>` (batch mode: `<topic>-<partition>-<first>-<last>`),
 * `Svc-Topic`, `Svc-Partition` and `Svc-Offset` (batch mode: the first offset, plus
 * `Svc-Offset-Last`). A retry sends the same key for the same records.
 *
 * One write() never runs past the call timeout (PluginContext.timeoutMs): requests start while
 * one more still fits in 80 % of it; the records not sent by then are `retryable`, and the
 * runtime commits the delivered prefix before it calls again. So a slow target drains a
 * backlog in many calls instead of timing out on all of it.
 */
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord } from '../plugin-api';

function classify(status: number): RecordResult {
  if (status >= 200 && status < 300) return { status: 'ok' };
  if (status === 408 || status === 429 || status >= 500) return { status: 'retryable', message: `HTTP ${status}` };
  return { status: 'permanent', message: `HTTP ${status}` };
}

const NOT_SENT: RecordResult = { status: 'retryable', message: 'not sent within this call (time budget used); sent by the next' };

/** The identifying headers of a request carrying `first`..`last` (one partition). */
export function deliveryHeaders(first: SinkRecord, last: SinkRecord): Record<string, string> {
  const single = first.offset === last.offset;
  return {
    'idempotency-key': single ? `${first.topic}-${first.partition}-${first.offset}` : `${first.topic}-${first.partition}-${first.offset}-${last.offset}`,
    'svc-topic': first.topic,
    'svc-partition': String(first.partition),
    'svc-offset': first.offset,
    ...(single ? {} : { 'svc-offset-last': last.offset }),
  };
}

const asJson = (r: SinkRecord): unknown => {
  const s = r.value.toString('utf8');
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return s;
  }
};

const positive = (v: unknown, d: number): number => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : d);

export function createSink(): SinkPlugin {
  let url = '';
  let method = 'POST';
  let headers: Record<string, string> = {};
  let perRecord = false;
  let timeout = 10_000;
  let inFlight = 16;
  let batchSize = 500;
  let budget = 24_000;
  const send = async (body: Buffer | string, contentType: string, ids: Record<string, string>, ms: number): Promise<RecordResult> => {
    try {
      const r = await fetch(url, { method, headers: { 'content-type': contentType, ...ids, ...headers }, body, signal: AbortSignal.timeout(ms) });
      await r.arrayBuffer();
      return classify(r.status);
    } catch (err) {
      return { status: 'retryable', message: (err as Error).message };
    }
  };
  return {
    async open(ctx: PluginContext, config: Record<string, unknown>) {
      if (typeof config.url !== 'string' || config.url === '') throw new Error('http sink: plugin_config.url is required');
      url = config.url;
      if (typeof config.method === 'string') method = config.method.toUpperCase();
      if (config.headers !== null && typeof config.headers === 'object') headers = config.headers as Record<string, string>;
      perRecord = config.mode === 'record';
      timeout = positive(config.timeout_ms, timeout);
      inFlight = positive(config.max_in_flight, inFlight);
      batchSize = positive(config.batch_size, batchSize);
      budget = Math.floor(ctx.timeoutMs * 0.8);
    },
    async write(records: SinkRecord[]): Promise<RecordResult[]> {
      // Requests: one per record, or one per batch_size records; each fills its records' results.
      const groups: [number, number][] = [];
      const step = perRecord ? 1 : batchSize;
      for (let i = 0; i < records.length; i += step) groups.push([i, Math.min(records.length, i + step)]);
      const out: RecordResult[] = records.map(() => NOT_SENT);
      const t0 = Date.now();
      // A request starts only if it can end (its own timeout) within the budget; a timeout_ms
      // longer than half the budget is shortened so that requests can start at all.
      const ms = Math.min(timeout, Math.floor(budget / 2));
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < groups.length && Date.now() - t0 + ms <= budget) {
          const [from, to] = groups[next++]!;
          const first = records[from]!;
          const last = records[to - 1]!;
          const res = perRecord
            ? await send(first.value, 'application/octet-stream', deliveryHeaders(first, last), ms)
            : await send(JSON.stringify(records.slice(from, to).map(asJson)), 'application/json', deliveryHeaders(first, last), ms);
          for (let i = from; i < to; i++) out[i] = res;
        }
      };
      await Promise.all(Array.from({ length: Math.min(inFlight, groups.length) }, lane));
      return out;
    },
    async flush() {},
    async close() {},
  };
}
