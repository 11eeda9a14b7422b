/**
 * The check of records against the registry's schemas (docs/schema-registry.md, "Validation at
 * the broker"), wherever it runs: on the main thread over the registry itself (validation.ts), on
 * a gateway thread over what the main thread sends it (thread-validation.ts).
 *
 *   record bytes (a null value or key passes: a tombstone) ──▶ magic 0, schema id (int32 BE) ──▶
 *   decoder by id (compiled once: ids never change their schema) ──▶ the id registered under the
 *   subject the strategy names (TopicNameStrategy: <topic>-value / -key; RecordNameStrategy: the
 *   record's name; TopicRecordNameStrategy: <topic>-<name>) ──▶ the payload decodes against the schema
 *
 * A record check is synchronous once its id's decoder and subjects are known; an id seen for the
 * first time (or its subjects after a registry change) costs one load from the source. Ids that
 * are not registered are remembered as such for a second, so a producer without the registry's
 * serializer does not send the node to the metadata store for every batch.
 */
import { type RefusedRecord, type ValidationRule } from '../util/validation-rule';
import { type RecordDecoder } from './formats';
import { type Outcome } from './types';

/** How long an id the registry did not have stays known as missing. */
const MISSING_FOR_MS = 1000;
/** Most compiled decoders kept (oldest dropped first). */
const DECODER_LIMIT = 10_000;
/** Loads of one id's subjects while the registry keeps changing under them, before its records are refused for now. */
const SUBJECT_LOADS = 3;

/** Where schemas come from: the registry (main thread) or the main thread (a gateway thread). */
export interface SchemaSource {
  /** Schema `id`: its compiled check when `withDecoder`, and the subjects it is registered under now. Throws when it cannot be read. */
  load(id: number, withDecoder: boolean): Promise<{ decoder: Outcome<RecordDecoder> | null; subjects: ReadonlySet<string> }>;
}

type Compiled = RecordDecoder | { missing: string; until: number };

export type CheckedRecord = { batch: number; index: number; key: Buffer | null; value: Buffer | null };

export class RecordChecker {
  readonly #source: SchemaSource;
  readonly #decoders = new Map<number, Compiled>();
  /** Per id, the subjects it is registered under; dropped whenever any version changes (`registryChanged`). */
  #subjects = new Map<number, ReadonlySet<string>>();
  /** Counts registry changes: subjects loaded across one are not kept. */
  #generation = 0;

  constructor(source: SchemaSource) {
    this.#source = source;
  }

  /** A version was registered or deleted somewhere: which subjects an id is under may have changed. */
  registryChanged(): void {
    this.#generation++;
    if (this.#subjects.size > 0) this.#subjects = new Map();
  }

  /** Why each record fails `rule` (empty: all pass). */
  check(rule: ValidationRule, records: ReadonlyArray<CheckedRecord>): Promise<RefusedRecord[]> | RefusedRecord[] {
    const unknown = new Set<number>();
    const now = Date.now();
    for (const r of records) {
      if (rule.value) this.#noteUnknown(r.value, now, unknown);
      if (rule.key) this.#noteUnknown(r.key, now, unknown);
    }
    if (unknown.size === 0) return this.#checkAll(rule, records);
    return Promise.all([...unknown].map((id) => this.#load(id))).then(() => this.#checkAll(rule, records));
  }

  #noteUnknown(bytes: Buffer | null, now: number, into: Set<number>): void {
    if (bytes === null || bytes.length < 5 || bytes[0] !== 0) return;
    const id = bytes.readInt32BE(1);
    const c = this.#decoders.get(id);
    if (c === undefined || ('missing' in c && c.until <= now) || (!('missing' in c) && !this.#subjects.has(id))) into.add(id);
  }

  async #load(id: number): Promise<void> {
    for (let i = 0; i < SUBJECT_LOADS; i++) {
      const known = this.#decoders.get(id);
      const withDecoder = known === undefined || 'missing' in known;
      const generation = this.#generation;
      let compiled: Compiled | null = null;
      try {
        const got = await this.#source.load(id, withDecoder);
        if (got.decoder !== null) compiled = got.decoder.ok ? got.decoder.value : { missing: got.decoder.message, until: Date.now() + MISSING_FOR_MS };
        if (generation === this.#generation) this.#subjects.set(id, got.subjects);
      } catch (err) {
        // The metadata store did not answer in time: refuse these records now, ask again on the next batch.
        compiled = { missing: `the schema registry could not be read: ${(err as Error).message}`, until: 0 };
      }
      if (compiled !== null) {
        if (this.#decoders.size >= DECODER_LIMIT) this.#decoders.delete(this.#decoders.keys().next().value!);
        this.#decoders.set(id, compiled);
      }
      if (this.#subjects.has(id) || compiled === null || 'missing' in compiled) return;
    }
  }

  #checkAll(rule: ValidationRule, records: ReadonlyArray<CheckedRecord>): RefusedRecord[] {
    const out: RefusedRecord[] = [];
    for (const r of records) {
      if (rule.value) {
        const why = this.#checkOne(rule, 'value', r.value);
        if (why !== null) out.push({ index: r.index, batch: r.batch, part: 'value', reason: why });
      }
      if (rule.key) {
        const why = this.#checkOne(rule, 'key', r.key);
        if (why !== null) out.push({ index: r.index, batch: r.batch, part: 'key', reason: why });
      }
    }
    return out;
  }

  #checkOne(rule: ValidationRule, part: 'key' | 'value', bytes: Buffer | null): string | null {
    // A null value (a tombstone) or key passes, as in Confluent Server: compacted topics delete by tombstone.
    if (bytes === null) return null;
    if (bytes.length < 5 || bytes[0] !== 0) return `the ${part} does not start with the schema registry's wire format (magic byte 0, then a 4-byte schema id)`;
    const id = bytes.readInt32BE(1);
    const c = this.#decoders.get(id);
    if (c === undefined) return `schema id ${id} could not be read`;
    if ('missing' in c) return `schema id ${id} of the ${part}: ${c.missing}`;
    const payload = bytes.subarray(5);
    const strategy = part === 'value' ? rule.valueStrategy : rule.keyStrategy;
    let subject: string;
    if (strategy === 'topic') subject = `${rule.topic}-${part}`;
    else {
      const name = c.recordName(payload);
      if (name === null) {
        // A payload that names no record because it is not one of the schema (Protobuf indexes naming no message) says so.
        const why = c.check(payload);
        if (why !== null) return `the ${part} does not match schema id ${id}: ${why}`;
        return `schema id ${id} names no record, which the ${strategy === 'record' ? 'RecordNameStrategy' : 'TopicRecordNameStrategy'} needs`;
      }
      subject = strategy === 'record' ? name : `${rule.topic}-${name}`;
    }
    const subjects = this.#subjects.get(id);
    if (subjects === undefined) return `schema id ${id}: the registry changed while its subjects were read; send it again`;
    if (!subjects.has(subject)) return `schema id ${id} of the ${part} is not registered under subject ${subject}`;
    const why = c.check(payload);
    return why === null ? null : `the ${part} does not match schema id ${id}: ${why}`;
  }
}
