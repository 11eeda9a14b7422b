/**
 * A request span around a Kafka Produce or Fetch (docs/metrics.md, "Traces"), made only when the
 * node runs with traces on (`KafkaContext.tracing`). The span, `kafka Produce` / `kafka Fetch`,
 * ends when the response is ready (a Fetch that waits: when its wait ends); its children are the
 * shard appends and reads the API makes. Kafka requests carry no trace context of their own (a
 * record's `traceparent` header belongs to that record, not to the request), so each starts a trace.
 */
import { type RequestSpan, type Tracing } from '../tracing';
import { Later } from './handler';

/** The APIs traced: the two that move records. */
export const TRACED_APIS: ReadonlySet<number> = new Set([0, 1]); // Produce, Fetch

/** The first non-zero `errorCode` in a response (top level, per topic, per partition), or 0. */
function firstError(res: unknown, depth = 0): number {
  if (res === null || typeof res !== 'object' || depth > 4) return 0;
  if (Array.isArray(res)) {
    for (const x of res) {
      const c = firstError(x, depth + 1);
      if (c !== 0) return c;
    }
    return 0;
  }
  const o = res as Record<string, unknown>;
  if (typeof o['errorCode'] === 'number' && o['errorCode'] !== 0) return o['errorCode'];
  for (const v of Object.values(o)) {
    if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) {
      const c = firstError(v, depth + 1);
      if (c !== 0) return c;
    }
  }
  return 0;
}

function finish(span: RequestSpan, res: unknown): void {
  const code = firstError(res);
  span.set('svc.kafka.error_code', code);
  span.end(code === 0 ? null : `kafka_error_${code}`);
}

/** Runs `handle` inside a `kafka <api>` span. */
export async function tracedHandle(tracing: Tracing, api: string, frameBytes: number, clientId: string | null, handle: () => Promise<unknown>): Promise<unknown> {
  // Not sampled: the request runs as if traces were off.
  const parent = tracing.parentOf(null);
  if (parent === null) return handle();
  return tracing.request(
    `kafka ${api}`,
    { 'svc.listener': 'kafka', 'messaging.system': 'kafka', 'messaging.operation.name': api, 'messaging.client.id': clientId ?? '', 'svc.kafka.request_bytes': frameBytes },
    parent,
    async (span) => {
      try {
        const res = await handle();
        if (res instanceof Later) {
          (res.response as Promise<unknown>).then(
            (r) => finish(span, r),
            () => span.end('internal'),
          );
        } else {
          finish(span, res);
        }
        return res;
      } catch (err) {
        span.end('internal');
        throw err;
      }
    },
  );
}
