/** Which shard holds a stream: FNV-1a (32-bit) of the UTF-8 name, modulo the shard count. Stable across restarts and worker counts. */
export function shardOf(name: string, shardCount: number): number {
  let h = 0x811c9dc5;
  const b = Buffer.from(name, 'utf8');
  for (let i = 0; i < b.length; i++) {
    h ^= b[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}

/** Which worker hosts a shard. */
export function workerOf(shard: number, workerCount: number): number {
  return shard % workerCount;
}
