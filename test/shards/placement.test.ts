import { shardOf, utf8ShardOf } from '../../src/shards/placement';

describe('shard placement', () => {
  it('hashes a name over its UTF-8 bytes, ASCII or not: the ASCII fast path places every name where the byte hash does', () => {
    const alphabet = ['a', 'Z', '0', '-', '_', '.', '/', '~', 'é', 'ß', '日', '本', '😀', '\u007f', '\u0080'];
    let seed = 42;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let k = 0; k < 5000; k++) {
      let name = '';
      for (let i = 1 + next(40); i > 0; i--) name += alphabet[next(alphabet.length)];
      for (const shards of [1, 7, 8, 64]) expect(shardOf(name, shards)).toBe(utf8ShardOf(name, shards));
    }
    // Placement is part of the data dir's layout: where these names go must never change.
    const places = ['orders', 'lock-0', '日本', '', 'a/b.c_d-e~f'].map((n) => [shardOf(n, 8), shardOf(n, 64), shardOf(n, 1000003)]);
    expect(places).toEqual([[4, 44, 57285], [7, 55, 508178], [1, 17, 120711], [5, 5, 129763], [3, 3, 903555]]);
  });
});
