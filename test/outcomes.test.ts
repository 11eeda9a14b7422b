/**
 * Storage outcomes (src/outcomes.ts): they cross the worker-thread hop as data, every listener
 * maps every kind, and docs/errors.md ("Outcomes") lists exactly the kinds the code has.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ErrorData, SvcError } from '../src/errors';
import { OUTCOME_KINDS, type Outcome, type OutcomeKind } from '../src/outcomes';
import { toHttpError } from '../src/gateway/kit/http-errors';
import { toDsError } from '../src/gateway/ds/ds-errors';
import { KafkaError, kafkaErrorOf } from '../src/kafka-wire/error-codes';

/** One of each kind: a kind added without a sample here does not compile. */
const SAMPLES: { [K in OutcomeKind]: Extract<Outcome, { kind: K }> } = {
  duplicate: { kind: 'duplicate', receivedSeq: 4 },
  stale_epoch: { kind: 'stale_epoch', currentEpoch: 3 },
  invalid_epoch_seq: { kind: 'invalid_epoch_seq', expectedSeq: 0, receivedSeq: 5 },
  unknown_producer: { kind: 'unknown_producer', expectedSeq: 0, receivedSeq: 6 },
  sequence_gap: { kind: 'sequence_gap', expectedSeq: 8, receivedSeq: 10 },
  closed: { kind: 'closed', producerSeq: 7 },
  moved: { kind: 'moved', nodeId: 2 },
  maybe_written: { kind: 'maybe_written' },
};

const refused = (o: Outcome): SvcError => SvcError.refused(o, `refused: ${o.kind}`, o.kind === 'closed' ? { next_seq: 12 } : undefined);
const header = (headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined => headers.find(([k]) => k.toLowerCase() === name)?.[1];

describe('storage outcomes', () => {
  it('are listed in docs/errors.md, every kind and no other', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Outcomes'));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| `([a-z_]+)` \|/gm)].map((m) => [m[1], m[2]]);
    expect(rows.map(([k]) => k).sort()).toEqual([...OUTCOME_KINDS].sort());
    for (const [kind, code] of rows) expect([kind, refused(SAMPLES[kind as OutcomeKind]).code]).toEqual([kind, code]);
  });

  it('cross the thread hop as data: the outcome and its code survive a JSON round trip', () => {
    for (const o of Object.values(SAMPLES)) {
      const wire = JSON.parse(JSON.stringify(refused(o).toData())) as ErrorData;
      const back = SvcError.fromData(wire);
      expect(back).toBeInstanceOf(SvcError);
      expect({ code: back.code, outcome: back.outcome, details: back.details }).toEqual({ code: refused(o).code, outcome: o, details: refused(o).details });
    }
  });

  it('map to Kafka error codes, none of them UNKNOWN_SERVER_ERROR', () => {
    const codes = Object.fromEntries(Object.values(SAMPLES).map((o) => [o.kind, kafkaErrorOf(refused(o))]));
    expect(codes).toEqual({
      duplicate: KafkaError.DUPLICATE_SEQUENCE_NUMBER,
      stale_epoch: KafkaError.INVALID_PRODUCER_EPOCH,
      invalid_epoch_seq: KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
      unknown_producer: KafkaError.UNKNOWN_PRODUCER_ID,
      sequence_gap: KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
      closed: KafkaError.INVALID_REQUEST,
      moved: KafkaError.NOT_LEADER_OR_FOLLOWER,
      // Kafka's "may still be written": the client retries with the same epoch and sequence.
      maybe_written: KafkaError.REQUEST_TIMED_OUT,
    });
  });

  it('map to the Svc listener status and headers', () => {
    const gap = toHttpError(refused(SAMPLES.sequence_gap));
    expect([gap.status, header(gap.headers, 'svc-expected-seq'), header(gap.headers, 'svc-received-seq')]).toEqual([409, '8', '10']);
    const fenced = toHttpError(refused(SAMPLES.stale_epoch));
    expect([fenced.status, header(fenced.headers, 'producer-epoch')]).toEqual([403, '3']);
    const fresh = toHttpError(refused(SAMPLES.invalid_epoch_seq));
    expect([fresh.status, header(fresh.headers, 'svc-expected-seq'), header(fresh.headers, 'svc-received-seq')]).toEqual([409, '0', '5']);
    const closed = toHttpError(refused(SAMPLES.closed));
    expect(closed.status).toBe(409);
    expect(JSON.parse(closed.body)).toMatchObject({ error: 'conflict', next_seq: 12 });
    expect(['svc-closed', 'svc-next-seq', 'svc-expected-seq', 'svc-received-seq'].map((h) => header(closed.headers, h))).toEqual(['true', '12', '7', '7']);
    const moved = toHttpError(refused(SAMPLES.moved));
    expect([moved.status, header(moved.headers, 'retry-after'), JSON.parse(moved.body).error]).toEqual([503, '1', 'moved']);
    const doubt = toHttpError(refused(SAMPLES.maybe_written));
    expect([doubt.status, header(doubt.headers, 'retry-after'), JSON.parse(doubt.body).error]).toEqual([503, '1', 'storage_unavailable']);
    const noProducer = toHttpError(SvcError.refused({ kind: 'closed', producerSeq: null }, 'stream is sealed', { next_seq: 12 }));
    expect(header(noProducer.headers, 'svc-expected-seq')).toBeUndefined();
  });

  it('map to the Durable Streams listener status and headers', () => {
    const gap = toDsError(refused(SAMPLES.sequence_gap));
    expect([gap.status, header(gap.headers, 'producer-expected-seq'), header(gap.headers, 'producer-received-seq')]).toEqual([409, '8', '10']);
    const unknown = toDsError(refused(SAMPLES.unknown_producer));
    expect([unknown.status, header(unknown.headers, 'producer-expected-seq')]).toEqual([409, '0']);
    // A new epoch that does not start at 0 is a bad request in Durable Streams.
    const fresh = toDsError(refused(SAMPLES.invalid_epoch_seq));
    expect([fresh.status, header(fresh.headers, 'producer-expected-seq'), header(fresh.headers, 'producer-received-seq')]).toEqual([400, '0', '5']);
    const moved = toDsError(refused(SAMPLES.moved));
    expect([moved.status, header(moved.headers, 'retry-after')]).toEqual([503, '1']);
    const doubt = toDsError(refused(SAMPLES.maybe_written));
    expect([doubt.status, header(doubt.headers, 'retry-after')]).toEqual([503, '1']);
    const fenced = toDsError(refused(SAMPLES.stale_epoch));
    expect([fenced.status, header(fenced.headers, 'producer-epoch')]).toEqual([403, '3']);
    const closed = toDsError(refused(SAMPLES.closed));
    expect([closed.status, header(closed.headers, 'stream-closed'), header(closed.headers, 'stream-next-offset')]).toEqual([409, 'true', expect.any(String)]);
  });
});
