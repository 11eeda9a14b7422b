/**
 * Small rules both threads share. Kept out of worker/shard.ts so that the gateway thread,
 * which needs them too, does not load the shard worker's modules.
 */

/** Media type without parameters, lower-cased: `Text/Plain; charset=utf-8` → `text/plain`. */
export function mediaType(ct: string): string {
  const i = ct.indexOf(';');
  return (i < 0 ? ct : ct.slice(0, i)).trim().toLowerCase();
}

/** Names sort by UTF-16 code units (JavaScript's string order); the gateway merges shards in the same order. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
