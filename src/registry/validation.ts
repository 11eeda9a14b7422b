/**
 * Validation at the broker (docs/schema-registry.md, "Validation at the broker"): the rule each
 * stream carries, and the check of its records against the registry.
 *
 *   rules   schema-validation/<stream>  ValidationRule  in the metadata store (shared by a cluster's
 *           nodes); mirrored into a Map here, so `rule(stream)` is one lookup and an unvalidated
 *           stream's append pays nothing else
 *   check   record bytes (a null value or key passes: a tombstone) ──▶ magic 0, schema id (int32 BE) ──▶ decoder by id (compiled once: ids
 *           never change their schema) ──▶ the id registered under the subject the strategy names
 *           (TopicNameStrategy: <topic>-value / -key; RecordNameStrategy: the record's name;
 *           TopicRecordNameStrategy: <topic>-<name>) ──▶ the payload decodes against the schema
 *
 * A record check is synchronous once its id's decoder is compiled; an id seen for the first time
 * costs one read of the registry (a quorum read on etcd) and its compilation. Ids that are not
 * registered are remembered as such for a second, so a producer without the registry's serializer
 * does not send the node to the metadata store for every batch.
 */
import { type MetaStore } from '../actors';
import { type RefusedRecord, type RecordValidation, type ValidationChange, type ValidationRule, applyValidationChange } from '../util/validation-rule';
import { type RecordDecoder } from './formats';
import { type SchemaRegistry } from './registry';

const RULE_PREFIX = 'schema-validation/';
const VERSION_PREFIX = 'schema-registry/v/';
/** How long an id the registry did not have stays known as missing. */
const MISSING_FOR_MS = 1000;
/** Most compiled decoders kept (oldest dropped first). */
const DECODER_LIMIT = 10_000;

const ruleKey = (stream: string): string => RULE_PREFIX + encodeURIComponent(stream);

type Compiled = RecordDecoder | { missing: string; until: number };

export class SchemaValidation implements RecordValidation {
  readonly #meta: MetaStore;
  readonly #registry: SchemaRegistry;
  readonly #rules = new Map<string, ValidationRule>();
  readonly #decoders = new Map<number, Compiled>();
  /** Per id, the subjects it is registered under; dropped whenever any version record changes. */
  #subjects = new Map<number, Set<string>>();
  /** Told the validated streams after each rule change (the gateway threads, which route their appends here). */
  readonly #watchers: Array<(streams: string[]) => Promise<void>> = [];
  /** The watchers' handling of the last rule change: a change is answered only after it. */
  #told: Promise<unknown> = Promise.resolve();

  constructor(meta: MetaStore, registry: SchemaRegistry) {
    this.#meta = meta;
    this.#registry = registry;
    for (const r of meta.list<ValidationRule>(RULE_PREFIX)) this.#rules.set(decodeURIComponent(r.key.slice(RULE_PREFIX.length)), r.value);
    meta.onChange((key, record) => {
      if (key.startsWith(VERSION_PREFIX)) {
        if (this.#subjects.size > 0) this.#subjects = new Map();
      } else if (key.startsWith(RULE_PREFIX)) {
        const stream = decodeURIComponent(key.slice(RULE_PREFIX.length));
        if (record === null) this.#rules.delete(stream);
        else this.#rules.set(stream, record.value as ValidationRule);
        if (this.#watchers.length > 0) this.#told = Promise.all(this.#watchers.map((w) => w(this.streams())));
      }
    });
  }

  /** The streams that carry a rule. */
  streams(): string[] {
    return [...this.#rules.keys()];
  }

  /**
   * `watcher` is told the validated streams now and after every rule change, from this node or
   * another; a change made here (`change`, `forget`) resolves only once its promise has.
   */
  watch(watcher: (streams: string[]) => Promise<void>): void {
    this.#watchers.push(watcher);
    this.#told = watcher(this.streams());
  }

  rule(stream: string): ValidationRule | null {
    return this.#rules.get(stream) ?? null;
  }

  async change(streams: readonly string[], topic: string, change: ValidationChange): Promise<void> {
    for (const stream of streams) {
      const next = applyValidationChange(this.rule(stream), change, topic);
      if (next === null) await this.#meta.delete(ruleKey(stream));
      else await this.#meta.put<ValidationRule>(ruleKey(stream), next);
    }
    await this.#told;
  }

  async forget(streams: readonly string[]): Promise<void> {
    for (const stream of streams) if (this.#rules.has(stream)) await this.#meta.delete(ruleKey(stream));
    await this.#told;
  }

  check(rule: ValidationRule, records: ReadonlyArray<{ batch: number; index: number; key: Buffer | null; value: Buffer | null }>): Promise<RefusedRecord[]> | RefusedRecord[] {
    const unknown = new Set<number>();
    const now = Date.now();
    for (const r of records) {
      if (rule.value) this.#noteUnknown(r.value, now, unknown);
      if (rule.key) this.#noteUnknown(r.key, now, unknown);
    }
    if (unknown.size === 0) return this.#checkAll(rule, records);
    return Promise.all([...unknown].map((id) => this.#compile(id))).then(() => this.#checkAll(rule, records));
  }

  #noteUnknown(bytes: Buffer | null, now: number, into: Set<number>): void {
    if (bytes === null || bytes.length < 5 || bytes[0] !== 0) return;
    const id = bytes.readInt32BE(1);
    const c = this.#decoders.get(id);
    if (c === undefined || ('missing' in c && c.until <= now)) into.add(id);
  }

  async #compile(id: number): Promise<void> {
    let compiled: Compiled;
    try {
      const d = await this.#registry.recordDecoder(id);
      compiled = d.ok ? d.value : { missing: d.message, until: Date.now() + MISSING_FOR_MS };
    } catch (err) {
      // The metadata store did not answer in time: refuse these records now, ask again on the next batch.
      compiled = { missing: `the schema registry could not be read: ${(err as Error).message}`, until: 0 };
    }
    if (this.#decoders.size >= DECODER_LIMIT) this.#decoders.delete(this.#decoders.keys().next().value!);
    this.#decoders.set(id, compiled);
  }

  #checkAll(rule: ValidationRule, records: ReadonlyArray<{ batch: number; index: number; key: Buffer | null; value: Buffer | null }>): RefusedRecord[] {
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
    let subjects = this.#subjects.get(id);
    if (subjects === undefined) {
      subjects = this.#registry.subjectsOf(id);
      this.#subjects.set(id, subjects);
    }
    if (!subjects.has(subject)) return `schema id ${id} of the ${part} is not registered under subject ${subject}`;
    const why = c.check(payload);
    return why === null ? null : `the ${part} does not match schema id ${id}: ${why}`;
  }
}
