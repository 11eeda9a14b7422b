/**
 * `libsvc_connector_http_sink`: delivers records to an HTTP endpoint (webhook).
 * plugin_config: `url` (required), `method` (POST), `headers` (table), `mode` = "batch"
 * (default: one request with a JSON array of the values parsed as JSON, or as strings when
 * they are not JSON) or "record" (one request per record, body = the value as is),
 * `timeout_ms` (10000). Statuses: 2xx ok; 408, 429, 5xx and network errors retryable; other
 * 4xx permanent (per record in "record" mode, for the whole batch in "batch" mode).
 */
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord } from '../plugin-api';

function classify(status: number): RecordResult {
  if (status >= 200 && status < 300) return { status: 'ok' };
  if (status === 408 || status === 429 || status >= 500) return { status: 'retryable', message: `HTTP ${status}` };
  return { status: 'permanent', message: `HTTP ${status}` };
}

export function createSink(): SinkPlugin {
  let url = '';
  let method = 'POST';
  let headers: Record<string, string> = {};
  let perRecord = false;
  let timeout = 10_000;
  const send = async (body: Buffer | string, contentType: string): Promise<RecordResult> => {
    try {
      const r = await fetch(url, { method, headers: { 'content-type': contentType, ...headers }, body, signal: AbortSignal.timeout(timeout) });
      await r.arrayBuffer();
      return classify(r.status);
    } catch (err) {
      return { status: 'retryable', message: (err as Error).message };
    }
  };
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>) {
      if (typeof config.url !== 'string' || config.url === '') throw new Error('http sink: plugin_config.url is required');
      url = config.url;
      if (typeof config.method === 'string') method = config.method.toUpperCase();
      if (config.headers !== null && typeof config.headers === 'object') headers = config.headers as Record<string, string>;
      perRecord = config.mode === 'record';
      if (typeof config.timeout_ms === 'number') timeout = config.timeout_ms;
    },
    async write(records: SinkRecord[]): Promise<RecordResult[]> {
      if (perRecord) {
        const out: RecordResult[] = [];
        for (const r of records) out.push(await send(r.value, 'application/octet-stream'));
        return out;
      }
      const items = records.map((r) => {
        const s = r.value.toString('utf8');
        try {
          return JSON.parse(s) as unknown;
        } catch {
          return s;
        }
      });
      const res = await send(JSON.stringify(items), 'application/json');
      return records.map(() => res);
    },
    async flush() {},
    async close() {},
  };
}
