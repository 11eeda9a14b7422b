/**
 * The headers that make an append idempotent (Svc-Producer-Id, -Epoch, -Seq) or conditional
 * (Svc-Match-Seq). The gateway checks their form; the shard applies the rules
 * (docs/protocol.md, "Idempotent producers" and "Conditional appends").
 */
import { type ProducerParams } from '../../shards';
import { parseProducerHeaders, parseUint } from '../kit';

const NAMES = { id: 'Svc-Producer-Id', epoch: 'Svc-Producer-Epoch', seq: 'Svc-Producer-Seq' } as const;

const uint = (name: string, raw: string): number => parseUint(name, raw)!;

/** The three producer headers, all or none; null when none is given. */
export function parseProducer(h: Readonly<Record<string, string | undefined>>): ProducerParams | null {
  return parseProducerHeaders(NAMES, h['svc-producer-id'], h['svc-producer-epoch'], h['svc-producer-seq'], uint);
}

export function parseMatchSeq(h: Readonly<Record<string, string | undefined>>): number | null {
  return parseUint('Svc-Match-Seq', h['svc-match-seq']) ?? null;
}
