/**
 * A stream's metadata, in two shapes:
 *
 *   StoredMeta ── readMeta ──▶ StreamMeta ── storedMeta ──▶ StoredMeta
 *   (CREATE/CONFIG/CATALOG       (in memory: every field     (written: fields at their
 *    frames, catalog entries)     present, defaults filled)   default left out)
 *
 * Fields were added over time (schema, Kafka topic, sliding TTL, forks, writer sequence), so the
 * stored form has them optional and older catalogs lack them. They are filled in once, where
 * metadata is read from disk; everything in memory works with the normalised form and never
 * re-derives a default (`?? null`, `?? 0`). Written back, a field at its default is left out again,
 * so new catalogs and old ones look alike and a CREATE frame is the same bytes as before.
 */
import { type Durability, type ForkInfo } from '../types';

/** The normalised metadata of a stream: what a shard keeps in memory. */
export interface StreamMeta {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  createdAtMs: number;
  /** Bound schema name (Svc-Schema), or null. */
  schema: string | null;
  /** Validate appends against `schema` (Svc-Schema-Validate). */
  schemaValidate: boolean;
  /** Kafka topic set explicitly (Svc-Kafka-Topic); null means derived from the name. */
  kafkaTopic: string | null;
  /** Sliding lifetime (Durable Streams Stream-TTL), seconds, or null. */
  idleTtlSeconds: number | null;
  /** A fork: seqs below fork.seq are read from the source; the stream's own start there. */
  fork: ForkInfo | null;
  /** Forks reading this stream (set by CONFIG frames). */
  forkRefs: number;
  /** Deleted while forks read it (CONFIG frame). */
  softDeleted: boolean;
  /** Last Durable Streams writer sequence (Stream-Seq), written by a CONFIG frame beside the data; null when none. */
  writerSeq: string | null;
  /**
   * An import in progress (stream-import.ts): the stream has no name yet, readers cannot see it;
   * a CONFIG frame `{importing: false}` publishes it. One left so at a restart is abandoned.
   */
  importing: boolean;
  /** The stream's durability class (Svc-Durability), or null: the node's default (--durability). */
  durability: Durability | null;
}

/** The stored form: the fields every catalog has, the later ones optional (absent or null: the default). */
export interface StoredMeta {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  createdAtMs: number;
  schema?: string | null;
  schemaValidate?: boolean;
  kafkaTopic?: string | null;
  idleTtlSeconds?: number | null;
  fork?: ForkInfo | null;
  forkRefs?: number;
  softDeleted?: boolean;
  writerSeq?: string | null;
  importing?: boolean;
  durability?: Durability | null;
}

/** The changes a CONFIG frame stores (only fields that change), in the normalised form. */
export type MetaPatch = Partial<StreamMeta>;

/** Fill in the defaults of metadata read from disk (a catalog entry, a CREATE or CATALOG frame). */
export function readMeta(m: StoredMeta): StreamMeta {
  return {
    name: m.name,
    contentType: m.contentType,
    ttlSeconds: m.ttlSeconds ?? null,
    expiresAtMs: m.expiresAtMs ?? null,
    createdAtMs: m.createdAtMs,
    schema: m.schema ?? null,
    schemaValidate: m.schemaValidate === true,
    kafkaTopic: m.kafkaTopic ?? null,
    idleTtlSeconds: m.idleTtlSeconds ?? null,
    fork: m.fork ?? null,
    forkRefs: m.forkRefs ?? 0,
    softDeleted: m.softDeleted === true,
    writerSeq: m.writerSeq ?? null,
    importing: m.importing === true,
    durability: m.durability ?? null,
  };
}

/** A CONFIG frame's patch applied over the metadata (replay, and the apply step of an accepted change). */
export function patchMeta(meta: StreamMeta, patch: MetaPatch | Partial<StoredMeta>): StreamMeta {
  return readMeta({ ...meta, ...patch });
}

/** The form written to disk: the fields at their default left out (see the file comment). */
export function storedMeta(m: StreamMeta): StoredMeta {
  const out: StoredMeta = { name: m.name, contentType: m.contentType, ttlSeconds: m.ttlSeconds, expiresAtMs: m.expiresAtMs, createdAtMs: m.createdAtMs };
  if (m.schema !== null) out.schema = m.schema;
  if (m.schemaValidate) out.schemaValidate = true;
  if (m.kafkaTopic !== null) out.kafkaTopic = m.kafkaTopic;
  if (m.idleTtlSeconds !== null) out.idleTtlSeconds = m.idleTtlSeconds;
  if (m.fork !== null) out.fork = m.fork;
  if (m.forkRefs !== 0) out.forkRefs = m.forkRefs;
  if (m.softDeleted) out.softDeleted = true;
  if (m.writerSeq !== null) out.writerSeq = m.writerSeq;
  if (m.importing) out.importing = true;
  if (m.durability !== null) out.durability = m.durability;
  return out;
}
