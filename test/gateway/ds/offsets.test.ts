import { SvcError } from '../../../src/errors';
import { nextCursor } from '../../../src/gateway/ds/cursor';
import { formatOffset, parseOffset } from '../../../src/gateway/ds/offsets';

describe('Durable Streams offsets', () => {
  test('format a seq as two zero-padded 16-digit parts that sort in stream order', () => {
    expect(formatOffset(0)).toBe('0000000000000000_0000000000000000');
    expect(formatOffset(42)).toBe('0000000000000000_0000000000000042');
    const offsets = [0, 9, 10, 99, 100, 123456789].map(formatOffset);
    expect([...offsets].sort()).toEqual(offsets);
  });

  test('parse back to the seq, with -1 and absent as the start and now as the tail', () => {
    expect(parseOffset(formatOffset(123456789))).toBe(123456789);
    expect(parseOffset(undefined)).toBe(0);
    expect(parseOffset('-1')).toBe(0);
    expect(parseOffset('now')).toBe(-1);
  });

  test('read an offset with another first part as past any tail', () => {
    expect(parseOffset('9999999999999999_9999999999999999')).toBe(Number.MAX_SAFE_INTEGER);
  });

  test.each(['', 'abc', '0_0', '-2', '0000000000000000-0000000000000000', '0000000000000000_000000000000000', ' 0000000000000000_0000000000000000'])(
    'refuse %j with invalid_parameter',
    (raw) => {
      expect(() => parseOffset(raw)).toThrow(SvcError);
    },
  );
});

describe('Stream-Cursor', () => {
  test('is a number that stays within an interval and grows past a client echo', () => {
    const now = 1_800_000_000_000;
    const c = nextCursor(undefined, now);
    expect(c).toMatch(/^\d+$/);
    expect(nextCursor(undefined, now + 1)).toBe(c);
    expect(Number(nextCursor(c, now))).toBeGreaterThan(Number(c));
    expect(nextCursor('1', now)).toBe(c);
  });
});
