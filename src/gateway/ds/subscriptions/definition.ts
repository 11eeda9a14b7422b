/**
 * A subscription's definition: what a PUT to `__ds/subscriptions/<id>` says, validated. The
 * same PUT again confirms (200); a different definition under the same id is a conflict (409),
 * decided by comparing `definitionKey`s.
 */
import { checkWebhookUrl } from './webhook-url';

export type SubscriptionType = 'webhook' | 'pull-wake';

export interface Definition {
  type: SubscriptionType;
  /** Glob over stream paths (`events/*`), or undefined. */
  pattern: string | undefined;
  /** Streams named at creation (`POST .../streams` adds more later without changing this). */
  streams: string[];
  webhook: { url: string } | undefined;
  /** The application/json stream pull-wake events are appended to. */
  wakeStream: string | undefined;
  /** How long a delivered wake or a claim holds the subscription without a callback, in ms. */
  leaseTtlMs: number;
  description: string | undefined;
}

export const DEFAULT_LEASE_TTL_MS = 30_000; // 30 s
export const MIN_LEASE_TTL_MS = 1_000; // 1 s
export const MAX_LEASE_TTL_MS = 600_000; // 10 min

export type Parsed<T> = { ok: true; value: T } | { ok: false; code: 'INVALID_REQUEST' | 'WEBHOOK_URL_REJECTED'; message: string };

const invalid = (message: string): Parsed<never> => ({ ok: false, code: 'INVALID_REQUEST', message });

/** `a/b/` and `/a/b` name the stream `a/b`. */
export function normalizePath(path: string): string {
  return path.replace(/^\/+/, '').replace(/\/+$/, '');
}

/** A stream path a subscription may name: non-empty, and not under the reserved `__ds/`. */
export function isStreamPath(path: string): boolean {
  return path.length > 0 && path !== '__ds' && !path.startsWith('__ds/');
}

/** A list of stream paths (`streams` of a PUT or of `POST .../streams`). */
export function parseStreamList(value: unknown, field: string): Parsed<string[]> {
  if (!Array.isArray(value)) return invalid(`${field} must be an array of stream paths`);
  const out: string[] = [];
  for (const item of value) {
    const path = typeof item === 'string' ? normalizePath(item) : '';
    if (!isStreamPath(path)) return invalid(`${field} must hold non-empty stream paths outside __ds/`);
    if (!out.includes(path)) out.push(path);
  }
  return { ok: true, value: out };
}

export function parseDefinition(body: unknown, allowLoopbackHttp: boolean): Parsed<Definition> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('the body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.type !== 'webhook' && b.type !== 'pull-wake') return invalid('type must be "webhook" or "pull-wake"');

  let pattern: string | undefined;
  if (b.pattern !== undefined) {
    if (typeof b.pattern !== 'string' || normalizePath(b.pattern) === '') return invalid('pattern must be a non-empty glob');
    pattern = normalizePath(b.pattern);
  }
  let streams: string[] = [];
  if (b.streams !== undefined) {
    const list = parseStreamList(b.streams, 'streams');
    if (!list.ok) return list;
    streams = list.value;
  }
  if (pattern === undefined && streams.length === 0) return invalid('a subscription needs a pattern or streams');

  const leaseTtlMs = b.lease_ttl_ms ?? DEFAULT_LEASE_TTL_MS;
  if (typeof leaseTtlMs !== 'number' || !Number.isInteger(leaseTtlMs) || leaseTtlMs < MIN_LEASE_TTL_MS || leaseTtlMs > MAX_LEASE_TTL_MS) {
    return invalid(`lease_ttl_ms must be an integer from ${MIN_LEASE_TTL_MS} to ${MAX_LEASE_TTL_MS}`);
  }
  if (b.description !== undefined && typeof b.description !== 'string') return invalid('description must be a string');

  let webhook: Definition['webhook'];
  let wakeStream: string | undefined;
  if (b.type === 'webhook') {
    const url = (b.webhook as { url?: unknown } | null | undefined)?.url;
    if (typeof url !== 'string' || url === '') return invalid('a webhook subscription needs webhook.url');
    const verdict = checkWebhookUrl(url, allowLoopbackHttp);
    if (!verdict.ok) return { ok: false, code: 'WEBHOOK_URL_REJECTED', message: verdict.reason };
    // Keep the URL as given: the subscription echoes it back and receivers compare it.
    webhook = { url };
  } else {
    const ws = typeof b.wake_stream === 'string' ? normalizePath(b.wake_stream) : '';
    if (!isStreamPath(ws)) return invalid('a pull-wake subscription needs wake_stream, a stream path');
    wakeStream = ws;
  }
  return {
    ok: true,
    value: { type: b.type, pattern, streams, webhook, wakeStream, leaseTtlMs, description: b.description as string | undefined },
  };
}

/** Equal for two definitions exactly when a PUT of one confirms the other. */
export function definitionKey(d: Definition): string {
  return JSON.stringify([d.type, d.pattern ?? null, [...d.streams].sort(), d.webhook?.url ?? null, d.wakeStream ?? null, d.leaseTtlMs, d.description ?? null]);
}
