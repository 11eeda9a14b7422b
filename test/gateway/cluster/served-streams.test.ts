/**
 * A gateway thread's copy of the streams placed on its node (gateway/cluster/served-streams.ts):
 * changes applied in order, a reset replaces the set, and a moved stream's new owner is remembered
 * for the requests in flight (the oldest forgotten first) until the stream is placed here again.
 */
import { ServedStreams } from '../../../src/gateway';

describe('ServedStreams', () => {
  test('adds, moves away with where to, deletes without, comes back, and a reset replaces the set', () => {
    const s = new ServedStreams();
    s.apply({ reset: true, add: ['/a', '/b', '/c'], gone: [] });
    expect(['/a', '/b', '/c', '/d'].map((n) => s.has(n))).toEqual([true, true, true, false]);
    s.apply({ add: [], gone: [['/a', { host: '127.0.0.1:2', nodeId: 2 }], ['/b', null]] });
    expect(s.has('/a')).toBe(false);
    expect(s.movedTo('/a')).toEqual({ host: '127.0.0.1:2', nodeId: 2 });
    expect(s.movedTo('/b')).toBeNull();
    // Served here again: no redirect, whatever it was before.
    s.apply({ add: ['/a'], gone: [] });
    expect(s.has('/a')).toBe(true);
    expect(s.movedTo('/a')).toBeNull();
    s.apply({ reset: true, add: ['/d'], gone: [] });
    expect(['/a', '/c', '/d'].map((n) => s.has(n))).toEqual([false, false, true]);
  });

  test('remembers at most 4,096 moves, the oldest forgotten first', () => {
    const s = new ServedStreams();
    const names = Array.from({ length: 4_100 }, (_, i) => `/s${i}`);
    s.apply({ reset: true, add: names, gone: [] });
    s.apply({ add: [], gone: names.map((n) => [n, { host: 'h:1', nodeId: 3 }]) });
    expect(s.movedTo('/s3')).toBeNull();
    expect(s.movedTo('/s4')).toEqual({ host: 'h:1', nodeId: 3 });
    expect(s.movedTo('/s4099')).toEqual({ host: 'h:1', nodeId: 3 });
  });
});
