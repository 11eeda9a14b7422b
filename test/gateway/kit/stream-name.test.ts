import { parseStreamName } from '../../../src/gateway/kit';

/** What parseStreamName gives: the name, or the error's code and message. */
function outcome(raw: string, maxBytes: number): string {
  try {
    return `ok ${parseStreamName(raw, maxBytes)}`;
  } catch (err) {
    return `${(err as { code?: string }).code} ${(err as Error).message}`;
  }
}

/** The same path with its last character percent-encoded: it names the same stream, through the decoding path. */
const encodedLast = (raw: string): string => `${raw.slice(0, -1)}%${raw.charCodeAt(raw.length - 1).toString(16).padStart(2, '0')}`;

describe('stream names from request paths', () => {
  it('a plain ASCII path is judged as the same path percent-encoded is (the one-pass check agrees with the decoding one)', () => {
    const pieces = ['/', '/', '/', 'a', 'Z', '9', '.', '..', '_', '-', '~', ' ', '\u007f', '\t', 'orders', '.x', 'x.', '_x'];
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const seen = new Set<string>();
    for (let k = 0; k < 20000; k++) {
      let raw = next(10) === 0 ? '' : '/';
      for (let i = next(8); i >= 0; i--) raw += pieces[next(pieces.length)];
      if (raw.length === 0) continue;
      for (const maxBytes of [4, 16, 1024]) {
        const plain = outcome(raw, maxBytes);
        expect([raw, maxBytes, plain]).toEqual([raw, maxBytes, outcome(encodedLast(raw), maxBytes)]);
        seen.add(plain.split(' ')[0]!);
      }
    }
    // Both kinds of outcome were tried many times.
    expect([...seen].sort()).toEqual(['invalid_stream_name', 'ok']);
  });

  it('names each rule a plain path breaks', () => {
    expect(outcome('/orders/2026', 64)).toBe('ok /orders/2026');
    expect(outcome('/a b', 64)).toBe('ok /a b');
    expect(outcome('/.a/b.', 64)).toBe('ok /.a/b.');
    expect(outcome('/orders', 4)).toBe('invalid_stream_name stream names are limited to 4 bytes');
    expect(outcome('/', 64)).toBe('invalid_stream_name a stream name is a path such as /orders');
    expect(outcome('orders', 64)).toBe('invalid_stream_name a stream name is a path such as /orders');
    expect(outcome('/a//b', 64)).toBe('invalid_stream_name stream names cannot have empty, "." or ".." segments');
    expect(outcome('/a/./b', 64)).toBe('invalid_stream_name stream names cannot have empty, "." or ".." segments');
    expect(outcome('/a/..', 64)).toBe('invalid_stream_name stream names cannot have empty, "." or ".." segments');
    expect(outcome('/a/', 64)).toBe('invalid_stream_name stream names cannot have empty, "." or ".." segments');
    expect(outcome('/_schemas', 64)).toBe('invalid_stream_name names whose first segment starts with "_" are reserved');
    expect(outcome('/a\u007f', 64)).toBe('invalid_stream_name stream names cannot contain control characters');
    expect(outcome('/a%2Fb', 64)).toBe('ok /a/b');
    expect(outcome('/caf%C3%A9', 64)).toBe('ok /café');
    expect(outcome('/%ZZ', 64)).toBe('invalid_stream_name the path is not valid percent-encoded UTF-8');
  });
});
