/**
 * `Stream-Cursor` (PROTOCOL.md "Caching and collapsing"): a number that changes every interval, so
 * that CDNs collapse concurrent long-polls of one interval into one origin request but never serve
 * a cached live answer past its interval. A client that echoes a cursor at or after the current
 * interval gets a larger one (its cache key must change, or it would loop on a cached answer).
 */
const INTERVAL_MS = 20_000; // 20 s
/** 2024-10-09T00:00:00Z: counting from a recent epoch keeps the numbers short. */
const EPOCH_MS = 1728432000000;

export function nextCursor(clientCursor: string | undefined, now = Date.now()): string {
  const interval = Math.floor((now - EPOCH_MS) / INTERVAL_MS);
  const client = clientCursor !== undefined && /^\d{1,15}$/.test(clientCursor) ? Number(clientCursor) : -1;
  if (client < interval) return String(interval);
  // Jitter so that clients that collided do not collide again.
  return String(client + 1 + Math.floor(Math.random() * 10));
}
