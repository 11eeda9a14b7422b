/**
 * The maintenance lease's takes (src/actors/cluster/maintenance-lease.ts) against a stub store,
 * with a TTL of 30 s so that waiting for the periodic tick would show:
 * - the holder's key vanishes while this node's take is in flight (the take conflicts): the node
 *   tries again within a second, not a TTL later — the dead holder's streams wait for this;
 * - a take that fails (etcd not answering) is tried again, with growing pauses, and logged once.
 */
import { MaintenanceLease, MAINTENANCE_KEY } from '../../../src/actors/cluster/maintenance-lease';
import { type Membership } from '../../../src/actors/cluster/membership';
import { MetaConflictError, type MetaRecord, type MetaStore } from '../../../src/actors/meta/meta-store';
import { createLogger } from '../../../src/log';

class StubMeta {
  readonly view = new Map<string, MetaRecord>();
  readonly #listeners: Array<(key: string, rec: MetaRecord | null) => void> = [];
  /** Each take's outcome, decided by the test when the take arrives. */
  onPut: (key: string, value: unknown) => Promise<void> = async () => undefined;
  puts: number[] = [];

  get(key: string): MetaRecord | null {
    return this.view.get(key) ?? null;
  }

  onChange(l: (key: string, rec: MetaRecord | null) => void): void {
    this.#listeners.push(l);
  }

  set(key: string, value: unknown | null): void {
    if (value === null) this.view.delete(key);
    else this.view.set(key, { value, version: this.view.size + 1 } as MetaRecord);
    for (const l of this.#listeners) l(key, this.get(key));
  }

  async putOnLive(key: string, value: unknown): Promise<MetaRecord> {
    this.puts.push(Date.now());
    await this.onPut(key, value);
    this.set(key, value);
    return this.get(key)!;
  }
}

const members = { clustered: true, registered: true, nodeId: 2, nodeEpoch: 1, leaseTtlS: 30 } as unknown as Membership;

function lease(meta: StubMeta, lines: string[] = []): MaintenanceLease {
  const log = createLogger('info', { write: (s: string) => lines.push(s) });
  return new MaintenanceLease(meta as unknown as MetaStore, members, log);
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('the holder key vanishes while a take is in flight: the take conflicts, and the node takes the lease within a second', async () => {
  const meta = new StubMeta();
  meta.set(MAINTENANCE_KEY, { nodeId: 1, nodeEpoch: 1 });
  // The take start() sends is held in flight until the test answers it.
  let conflict!: () => void;
  meta.onPut = () => new Promise<void>((_, reject) => (conflict = () => reject(new MetaConflictError(MAINTENANCE_KEY, 'the key exists'))));
  const l = lease(meta);
  l.start();
  await until('a take in flight', () => meta.puts.length === 1, 1_000);
  // The holder dies: its key's deletion reaches the view while the take is under way, and the
  // take then fails its create-only compare (the key was there when etcd ran it).
  meta.set(MAINTENANCE_KEY, null);
  meta.onPut = async () => undefined;
  const t0 = Date.now();
  conflict();
  await until('this node holds the lease', () => l.isHolder(), 5_000);
  expect(Date.now() - t0).toBeLessThan(1_000);
  expect(meta.puts).toHaveLength(2);
  l.stop();
});

test('takes that fail are tried again with growing pauses, logged once, until one succeeds', async () => {
  const meta = new StubMeta();
  const lines: string[] = [];
  const l = lease(meta, lines);
  let fail = true;
  meta.onPut = async () => {
    if (fail) throw new Error('etcd did not answer');
  };
  l.start();
  await until('four takes', () => meta.puts.length >= 4, 5_000);
  const gaps = meta.puts.slice(1).map((t, i) => t - meta.puts[i]!);
  expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
  fail = false;
  await until('this node holds the lease', () => l.isHolder(), 10_000);
  expect(lines.filter((s) => s.includes('taking the maintenance lease failed'))).toHaveLength(1);
  l.stop();
});
