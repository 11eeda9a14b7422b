/**
 * Idempotent producers (Svc-Producer-Id, Svc-Producer-Epoch, Svc-Producer-Seq) and conditional
 * appends (Svc-Match-Seq), spec/stream-service.md "Append or trim" and "Errors"; the choices the
 * spec leaves open are in docs/protocol.md, "Idempotent producers" and "Conditional appends".
 * Run against both HTTP engines.
 */
import { BINARY_BATCH, ENGINES, JSON_BATCH, type Res, type Svc, binaryBatch, createWith, expectError, sleep, useNode } from './client';

const TEXT = { 'content-type': 'text/plain' };

const producer = (id: string, epoch: number, seq: number): Record<string, string> => ({
  'svc-producer-id': id,
  'svc-producer-epoch': String(epoch),
  'svc-producer-seq': String(seq),
});

const seqs = (res: Res) => ({ start: Number(res.header('svc-start-seq')), next: Number(res.header('svc-next-seq')) });

async function bodies(svc: Svc, name: string): Promise<string[]> {
  const { records } = await svc.read(name, { count: 10000 });
  records.forEach((r, i) => expect(r.seq).toBe(i));
  return records.map((r) => r.body!);
}

describe.each(ENGINES)('idempotent producers and conditional appends over the %s engine', (engine) => {
  const svc = useNode(engine);

  const send = (name: string, body: string, id: string, epoch: number, seq: number, extra: Record<string, string> = {}): Promise<Res> =>
    svc.post(name, { headers: { ...TEXT, ...producer(id, epoch, seq), ...extra }, body });

  describe('idempotent producers', () => {
    test('an append of a new producer sequence to a sealed stream is 409 with the expected and received sequence', async () => {
      const name = await createWith(svc, svc.name('sealed'));
      expect((await send(name, 'first', 'prod-sealed', 0, 0)).status).toBe(200);
      expect((await svc.post(name, { headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const r = await send(name, 'late', 'prod-sealed', 0, 1);
      expectError(r, 409, 'conflict');
      expect(r.header('svc-closed')).toBe('true');
      expect(r.header('svc-expected-seq')).toBe('1');
      expect(r.header('svc-received-seq')).toBe('1');
    });

    test('each producer sequence is accepted exactly once, in order, with ordinary acknowledgements', async () => {
      const name = await createWith(svc, svc.name('once'));
      for (let i = 0; i < 3; i++) {
        const r = await send(name, `p${i}`, 'prod-1', 0, i);
        expect(r.status).toBe(200);
        expect(seqs(r)).toEqual({ start: i, next: i + 1 });
        expect(r.header('svc-timestamp')).toMatch(/^\d+$/);
        expect(r.header('svc-producer-duplicate')).toBeUndefined();
      }
      expect(await bodies(svc, name)).toEqual(['p0', 'p1', 'p2']);
    });

    test('a repeat of the last sequence is acknowledged with the original seqs and timestamp and writes nothing', async () => {
      const name = await createWith(svc, svc.name('dup'));
      await send(name, 'a', 'prod-dup', 0, 0);
      const original = await send(name, 'b', 'prod-dup', 0, 1);
      // The tail moves on (another writer) before the retry arrives.
      expect((await svc.post(name, { headers: TEXT, body: 'other' })).status).toBe(200);
      const retry = await send(name, 'b', 'prod-dup', 0, 1);
      expect(retry.status).toBe(200);
      expect(seqs(retry)).toEqual({ start: 1, next: 2 });
      expect(retry.header('svc-timestamp')).toBe(original.header('svc-timestamp'));
      expect(retry.header('svc-producer-duplicate')).toBe('true');
      expect(await bodies(svc, name)).toEqual(['a', 'b', 'other']);
    });

    test('a JSON batch is one producer sequence, and its repeat reports the whole original range', async () => {
      const name = await createWith(svc, svc.name('json'));
      const batch = JSON.stringify({ records: [{ body: 'x' }, { body: 'y' }, { body: 'z' }] });
      const first = await svc.post(name, { headers: { 'content-type': JSON_BATCH, ...producer('prod-json', 0, 0) }, body: batch });
      expect(seqs(first)).toEqual({ start: 0, next: 3 });
      const second = await svc.post(name, { headers: { 'content-type': JSON_BATCH, ...producer('prod-json', 0, 1) }, body: JSON.stringify({ records: [{ body: 'w' }] }) });
      expect(seqs(second)).toEqual({ start: 3, next: 4 });
      const retry = await svc.post(name, { headers: { 'content-type': JSON_BATCH, ...producer('prod-json', 0, 0) }, body: batch });
      expect(retry.status).toBe(200);
      expect(seqs(retry)).toEqual({ start: 0, next: 3 });
      expect(await bodies(svc, name)).toEqual(['x', 'y', 'z', 'w']);
    });

    test('a sequence that leaves a gap is 409 conflict with Svc-Expected-Seq, Svc-Received-Seq and a JSON body', async () => {
      const name = await createWith(svc, svc.name('gap'));
      await send(name, 'a', 'prod-gap', 0, 0);
      const r = await send(name, 'c', 'prod-gap', 0, 2);
      expectError(r, 409, 'conflict');
      expect(r.header('svc-expected-seq')).toBe('1');
      expect(r.header('svc-received-seq')).toBe('2');
      expect(await bodies(svc, name)).toEqual(['a']);
    });

    test('a producer the stream has not seen must start at sequence 0', async () => {
      const name = await createWith(svc, svc.name('fresh'));
      const r = await send(name, 'a', 'prod-fresh', 0, 3);
      expectError(r, 409, 'conflict');
      expect([r.header('svc-expected-seq'), r.header('svc-received-seq')]).toEqual(['0', '3']);
      expect(await bodies(svc, name)).toEqual([]);
    });

    test('a regression within the last 5 sequences gets its exact acknowledgement; an older one is acknowledged as a duplicate without seqs', async () => {
      const name = await createWith(svc, svc.name('regress'));
      for (let i = 0; i < 10; i++) expect((await send(name, `r${i}`, 'prod-old', 0, i)).status).toBe(200);
      const recent = await send(name, 'r5', 'prod-old', 0, 5);
      expect(recent.status).toBe(200);
      expect(seqs(recent)).toEqual({ start: 5, next: 6 });
      expect(recent.header('svc-producer-duplicate')).toBe('true');
      const old = await send(name, 'r4', 'prod-old', 0, 4);
      expect(old.status).toBe(200);
      expect(old.header('svc-producer-duplicate')).toBe('true');
      expect(old.header('svc-start-seq')).toBeUndefined();
      expect(old.header('svc-next-seq')).toBeUndefined();
      expect(old.text).toBe('');
      expect(await bodies(svc, name)).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`));
    });

    test('a stale epoch is fenced with 403, a Producer-Epoch header carrying the current epoch and a JSON body', async () => {
      const name = await createWith(svc, svc.name('fence'));
      expect((await send(name, 'e0', 'prod-fence', 0, 0)).status).toBe(200);
      expect((await send(name, 'e2', 'prod-fence', 2, 0)).status).toBe(200);
      const r = await send(name, 'stale', 'prod-fence', 1, 1);
      const body = expectError(r, 403, 'producer_fenced');
      expect(body.message).toMatch(/epoch/);
      expect(r.header('producer-epoch')).toBe('2');
      expect(await bodies(svc, name)).toEqual(['e0', 'e2']);
    });

    test('a new epoch must start at sequence 0, and then fences the old one', async () => {
      const name = await createWith(svc, svc.name('epoch'));
      for (let i = 0; i < 3; i++) await send(name, `a${i}`, 'prod-epoch', 0, i);
      const r = await send(name, 'b', 'prod-epoch', 1, 3);
      expectError(r, 409, 'conflict');
      expect([r.header('svc-expected-seq'), r.header('svc-received-seq')]).toEqual(['0', '3']);
      const ok = await send(name, 'b0', 'prod-epoch', 1, 0);
      expect(ok.status).toBe(200);
      expect(seqs(ok)).toEqual({ start: 3, next: 4 });
      expect((await send(name, 'b1', 'prod-epoch', 1, 1)).status).toBe(200);
      const old = await send(name, 'a3', 'prod-epoch', 0, 3);
      expectError(old, 403, 'producer_fenced');
      expect(old.header('producer-epoch')).toBe('1');
      expect(await bodies(svc, name)).toEqual(['a0', 'a1', 'a2', 'b0', 'b1']);
    });

    test('two producers interleave on one stream, each with its own sequence', async () => {
      const name = await createWith(svc, svc.name('two'));
      const expected: string[] = [];
      for (let i = 0; i < 5; i++) {
        for (const p of ['A', 'B']) {
          const r = await send(name, `${p}${i}`, `prod-${p}`, 0, i);
          expect(r.status).toBe(200);
          expected.push(`${p}${i}`);
        }
      }
      // Concurrently, the two producers' next appends are committed together.
      const [a, b] = await Promise.all([send(name, 'A5', 'prod-A', 0, 5), send(name, 'B5', 'prod-B', 0, 5)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(new Set([seqs(a).start, seqs(b).start])).toEqual(new Set([10, 11]));
      // A repeat of A's last append answers with A's seqs, not B's.
      const retry = await send(name, 'A5', 'prod-A', 0, 5);
      expect(seqs(retry)).toEqual(seqs(a));
      const all = await bodies(svc, name);
      expect(all.slice(0, 10)).toEqual(expected);
      expect(new Set(all.slice(10))).toEqual(new Set(['A5', 'B5']));
    });

    test('a retry sent while the original is still in flight gets the original acknowledgement and nothing is written twice', async () => {
      const name = await createWith(svc, svc.name('inflight'));
      const rs = await Promise.all(Array.from({ length: 4 }, () => send(name, 'once', 'prod-inflight', 0, 0)));
      for (const r of rs) {
        expect(r.status).toBe(200);
        expect(seqs(r)).toEqual({ start: 0, next: 1 });
      }
      expect(rs.filter((r) => r.header('svc-producer-duplicate') === 'true')).toHaveLength(3);
      expect(await bodies(svc, name)).toEqual(['once']);
    });

    test('concurrent appends of one producer are serialised by arrival: early sequences get 409 and retries converge to each record once, in sequence order', async () => {
      const name = await createWith(svc, svc.name('storm'));
      const N = 50;
      // Deliberately early: sequence 49 before anything else is a gap.
      const early = await send(name, 'm49', 'prod-storm', 0, N - 1);
      expectError(early, 409, 'conflict');
      expect(early.header('svc-expected-seq')).toBe('0');
      const one = async (i: number): Promise<Res> => {
        for (let attempt = 0; attempt < 5000; attempt++) {
          const r = await send(name, `m${i}`, 'prod-storm', 0, i);
          if (r.status === 200) return r;
          expectError(r, 409, 'conflict');
          expect(Number(r.header('svc-received-seq'))).toBe(i);
          expect(Number(r.header('svc-expected-seq'))).toBeLessThan(i);
          await sleep(1 + Math.random() * 4);
        }
        throw new Error(`sequence ${i} never got accepted`);
      };
      // Fired at once, highest first, so many arrive before their predecessors.
      const acks = await Promise.all(Array.from({ length: N }, (_, k) => one(N - 1 - k)));
      acks.reverse().forEach((r, i) => expect(seqs(r)).toEqual({ start: i, next: i + 1 }));
      expect(await bodies(svc, name)).toEqual(Array.from({ length: N }, (_, i) => `m${i}`));
    });

    test('a retry of the append that sealed the stream is acknowledged as a duplicate, not refused as sealed', async () => {
      const name = await createWith(svc, svc.name('sealdup'));
      const first = await send(name, 'last', 'prod-seal', 0, 0, { 'svc-closed': 'true' });
      expect(first.status).toBe(200);
      expect(first.header('svc-closed')).toBe('true');
      const retry = await send(name, 'last', 'prod-seal', 0, 0, { 'svc-closed': 'true' });
      expect(retry.status).toBe(200);
      expect(seqs(retry)).toEqual({ start: 0, next: 1 });
      expect(retry.header('svc-producer-duplicate')).toBe('true');
      // The next sequence is new data, and a sealed stream refuses it.
      expectError(await send(name, 'more', 'prod-seal', 0, 1), 409, 'conflict');
      expect(await bodies(svc, name)).toEqual(['last']);
    });

    test('producer headers come together or not at all, within their ranges', async () => {
      const name = await createWith(svc, svc.name('hdrs'));
      const bad: Array<Record<string, string>> = [
        { 'svc-producer-id': 'p', 'svc-producer-epoch': '0' },
        { 'svc-producer-id': 'p', 'svc-producer-seq': '0' },
        { 'svc-producer-epoch': '0', 'svc-producer-seq': '0' },
        producer('p', 40000, 0),
        producer('p', 0, 2147483648),
        producer('p', -1, 0),
        { ...producer('p', 0, 0), 'svc-producer-seq': 'one' },
        producer('x'.repeat(257), 0, 0),
      ];
      for (const h of bad) expectError(await svc.post(name, { headers: { ...TEXT, ...h }, body: 'x' }), 400, 'invalid_parameter');
      // The limits themselves are accepted.
      expect((await send(name, 'x', 'y'.repeat(256), 32767, 0)).status).toBe(200);
      expect(await bodies(svc, name)).toEqual(['x']);
    });

    test('producer headers are refused on binary batches, seal-only requests and trims', async () => {
      const name = await createWith(svc, svc.name('refuse'));
      const bin = binaryBatch([{ key: null, value: Buffer.from('b'), headers: null }]);
      expectError(await svc.post(name, { headers: { 'content-type': BINARY_BATCH, ...producer('p', 0, 0) }, body: bin }), 400, 'bad_request');
      expectError(await svc.post(name, { headers: { ...producer('p', 0, 0), 'svc-closed': 'true' } }), 400, 'bad_request');
      expectError(await svc.post(name, { headers: { ...producer('p', 0, 0), 'svc-trim-seq': '0' } }), 400, 'bad_request');
      expect(await bodies(svc, name)).toEqual([]);
      expect((await svc.head(name)).header('svc-closed')).toBe('false');
    });
  });

  describe('conditional appends', () => {
    test('Svc-Match-Seq equal to the tail appends', async () => {
      const name = await createWith(svc, svc.name('match'), ['a', 'b']);
      const r = await svc.post(name, { headers: { ...TEXT, 'svc-match-seq': '2' }, body: 'c' });
      expect(r.status).toBe(200);
      expect(seqs(r)).toEqual({ start: 2, next: 3 });
      expect(await bodies(svc, name)).toEqual(['a', 'b', 'c']);
    });

    test('Svc-Match-Seq elsewhere is 412 seq_mismatch with next_seq in the body and Svc-Next-Seq, and writes nothing', async () => {
      const name = await createWith(svc, svc.name('mismatch'), ['a', 'b']);
      for (const at of ['0', '1', '3', '1000']) {
        const r = await svc.post(name, { headers: { ...TEXT, 'svc-match-seq': at }, body: 'x' });
        const body = expectError(r, 412, 'seq_mismatch');
        expect(body.next_seq).toBe(2);
        expect(r.header('svc-next-seq')).toBe('2');
      }
      const batch = await svc.post(name, { headers: { 'content-type': JSON_BATCH, 'svc-match-seq': '1' }, body: JSON.stringify({ records: [{ body: 'y' }] }) });
      expectError(batch, 412, 'seq_mismatch');
      expect(await bodies(svc, name)).toEqual(['a', 'b']);
    });

    test('of two writers racing on the same Svc-Match-Seq exactly one wins', async () => {
      const name = await createWith(svc, svc.name('race'));
      const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => svc.post(name, { headers: { ...TEXT, 'svc-match-seq': '0' }, body: `w${i}` })));
      expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of rs.filter((x) => x.status !== 200)) expect(expectError(r, 412, 'seq_mismatch').next_seq).toBe(1);
      expect(await bodies(svc, name)).toHaveLength(1);
    });

    test('with a producer, producer rules come first: a duplicate is acknowledged though the tail moved, and a mismatch does not use up the sequence', async () => {
      const name = await createWith(svc, svc.name('match-prod'));
      const first = await send(name, 'a', 'prod-m', 0, 0, { 'svc-match-seq': '0' });
      expect(seqs(first)).toEqual({ start: 0, next: 1 });
      expect((await svc.post(name, { headers: TEXT, body: 'other' })).status).toBe(200);
      const dup = await send(name, 'a', 'prod-m', 0, 0, { 'svc-match-seq': '0' });
      expect(dup.status).toBe(200);
      expect(seqs(dup)).toEqual({ start: 0, next: 1 });
      const miss = await send(name, 'b', 'prod-m', 0, 1, { 'svc-match-seq': '1' });
      expect(expectError(miss, 412, 'seq_mismatch').next_seq).toBe(2);
      const ok = await send(name, 'b', 'prod-m', 0, 1, { 'svc-match-seq': '2' });
      expect(seqs(ok)).toEqual({ start: 2, next: 3 });
      expect(await bodies(svc, name)).toEqual(['a', 'other', 'b']);
    });

    test('Svc-Match-Seq must be an integer >= 0 and does not apply to trims', async () => {
      const name = await createWith(svc, svc.name('match-hdr'), ['a']);
      expectError(await svc.post(name, { headers: { ...TEXT, 'svc-match-seq': '-1' }, body: 'x' }), 400, 'invalid_parameter');
      expectError(await svc.post(name, { headers: { ...TEXT, 'svc-match-seq': 'tail' }, body: 'x' }), 400, 'invalid_parameter');
      expectError(await svc.post(name, { headers: { 'svc-match-seq': '1', 'svc-trim-seq': '1' } }), 400, 'bad_request');
      expect(await bodies(svc, name)).toEqual(['a']);
    });

    test('a seal-only request with Svc-Match-Seq seals only when the tail matches', async () => {
      const name = await createWith(svc, svc.name('match-seal'), ['a']);
      expectError(await svc.post(name, { headers: { 'svc-closed': 'true', 'svc-match-seq': '0' } }), 412, 'seq_mismatch');
      expect((await svc.head(name)).header('svc-closed')).toBe('false');
      const r = await svc.post(name, { headers: { 'svc-closed': 'true', 'svc-match-seq': '1' } });
      expect(r.status).toBe(200);
      expect((await svc.head(name)).header('svc-closed')).toBe('true');
    });
  });
});
