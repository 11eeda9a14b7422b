/**
 * The compacted object that runs made together share (src/objects/shared-objects.ts), on its own:
 * which runs go into which object, at what offsets, when an object goes, and when it is recorded
 * ahead of its runs. Compaction with it, against etcd and a `file:` store:
 * test/objects/maintenance.test.ts.
 */
import { type PlacedRun, SharedObjects } from '../../src/objects/shared-objects';

/** A writer that keeps what it was asked to put and record; each put names the object after its first run's stream, and keeps them all. */
function writer(opts: { failPut?: boolean } = {}): { objects: Array<{ key: string; first: string; streams: string[]; bytes: number }>; records: string[]; shared: (maxBytes?: number, waitMs?: number) => SharedObjects<string> } {
  const objects: Array<{ key: string; first: string; streams: string[]; bytes: number }> = [];
  const records: string[] = [];
  return {
    objects,
    records,
    shared: (maxBytes = 1000, waitMs = 60_000) =>
      new SharedObjects<string>(
        {
          put: async (streams, parts) => {
            await new Promise((r) => setImmediate(r));
            if (opts.failPut === true) throw new Error('the store is not answering');
            const first = streams[0]!;
            const key = `c/${first}/${objects.length}`;
            objects.push({ key, first, streams, bytes: parts.reduce((n, p) => n + p.length, 0) });
            return key;
          },
          record: async (key) => {
            records.push(key);
            return 100 + records.length;
          },
        },
        maxBytes,
        waitMs,
      ),
  };
}

const bytes = (n: number): Buffer[] => [Buffer.alloc(n, 1)];

describe('SharedObjects', () => {
  it('puts the runs on their way together into one object, at consecutive offsets, recorded ahead of them; it goes when the last of them arrives', async () => {
    const w = writer();
    // A wait of a minute: the object goes because no other run is on its way, not by its timer.
    const shared = w.shared(1000, 60_000);
    for (let i = 0; i < 3; i++) shared.coming();
    const placed = await Promise.all([shared.add('a', bytes(10), 10), shared.add('b', bytes(20), 20), shared.add('c', bytes(30), 30)]);
    expect(w.objects).toEqual([{ key: 'c/a/0', first: 'a', streams: ['a', 'b', 'c'], bytes: 60 }]);
    expect(w.records).toEqual(['c/a/0']);
    expect(placed).toEqual<PlacedRun[]>([
      { objectKey: 'c/a/0', off: 0, size: 60, recorded: 101 },
      { objectKey: 'c/a/0', off: 10, size: 60, recorded: 101 },
      { objectKey: 'c/a/0', off: 30, size: 60, recorded: 101 },
    ]);
  });

  it('puts a run that nothing else is on its way with into an object of its own at once, which its own transaction records', async () => {
    const w = writer();
    const shared = w.shared(1000, 60_000);
    for (const s of ['x', 'y']) {
      shared.coming();
      expect(await shared.add(s, bytes(50), 50)).toEqual({ objectKey: `c/${s}/${s === 'x' ? 0 : 1}`, off: 0, size: 50, recorded: null });
    }
    expect(w.records).toEqual([]);
  });

  it('sends the object when a run on its way gives up and no other is coming', async () => {
    const w = writer();
    const shared = w.shared(1000, 60_000);
    shared.coming();
    shared.coming();
    const a = shared.add('a', bytes(10), 10);
    shared.notComing();
    expect(await a).toEqual({ objectKey: 'c/a/0', off: 0, size: 10, recorded: null });
  });

  it('sends the object after waitMs when a run on its way is slow, and takes the slow one into the next', async () => {
    const w = writer();
    const shared = w.shared(1000, 20);
    shared.coming();
    shared.coming();
    const t0 = Date.now();
    const a = await shared.add('a', bytes(10), 10);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15);
    expect(a).toMatchObject({ objectKey: 'c/a/0', off: 0 });
    expect(await shared.add('b', bytes(10), 10)).toMatchObject({ objectKey: 'c/b/1', off: 0 });
  });

  it('keeps an object within maxBytes: a run that would pass it starts the next object, and one larger than it goes alone', async () => {
    const w = writer();
    const shared = w.shared(100, 60_000);
    for (let i = 0; i < 4; i++) shared.coming();
    const placed = await Promise.all([shared.add('a', bytes(60), 60), shared.add('b', bytes(60), 60), shared.add('c', bytes(250), 250), shared.add('d', bytes(30), 30)]);
    expect(w.objects.map((o) => [o.first, o.bytes])).toEqual([
      ['a', 60],
      ['b', 60],
      ['c', 250],
      ['d', 30],
    ]);
    expect(placed.map((p) => p.off)).toEqual([0, 0, 0, 0]);
  });

  it('fails every run of an object whose put fails, and records nothing', async () => {
    const w = writer({ failPut: true });
    const shared = w.shared(1000, 60_000);
    shared.coming();
    shared.coming();
    const results = await Promise.allSettled([shared.add('a', bytes(10), 10), shared.add('b', bytes(10), 10)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(w.records).toEqual([]);
  });
});
