/**
 * Validation at the broker (docs/schema-registry.md, "Validation at the broker"): the rule each
 * stream carries, and the check of its records against the registry (record-checker.ts).
 *
 *   rules   schema-validation/<stream>  ValidationRule  in the metadata store (shared by a cluster's
 *           nodes); mirrored into a Map here, so `rule(stream)` is one lookup and an unvalidated
 *           stream's append pays nothing else
 *   check   RecordChecker over this node's registry: an id seen for the first time costs one read
 *           of the registry (a quorum read on etcd) and its compilation
 *
 * The gateway threads get every rule after each change (`watch`) and check records themselves
 * over schemas this thread sends them (`schemaFor`; gateway/thread-validation.ts).
 */
import { type MetaStore } from '../actors';
import { type RecordValidation, type ValidationChange, type ValidationRule, applyValidationChange } from '../util/validation-rule';
import { type SchemaRegistry, type DecoderSource } from './registry';
import { type CheckedRecord, RecordChecker } from './record-checker';
import { type Outcome } from './types';

const RULE_PREFIX = 'schema-validation/';
const VERSION_PREFIX = 'schema-registry/v/';

const ruleKey = (stream: string): string => RULE_PREFIX + encodeURIComponent(stream);

export class SchemaValidation implements RecordValidation {
  readonly #meta: MetaStore;
  readonly #registry: SchemaRegistry;
  readonly #rules = new Map<string, ValidationRule>();
  readonly #checker: RecordChecker;
  /** Told every rule after each rule change (the gateway threads, which check their appends themselves). */
  readonly #watchers: Array<(rules: Array<[stream: string, rule: ValidationRule]>) => Promise<void>> = [];
  /** Told of each registry version change (the gateway threads drop the subjects they know). */
  readonly #registryWatchers: Array<() => void> = [];
  /** The watchers' handling of the last rule change: a change is answered only after it. */
  #told: Promise<unknown> = Promise.resolve();

  constructor(meta: MetaStore, registry: SchemaRegistry) {
    this.#meta = meta;
    this.#registry = registry;
    this.#checker = new RecordChecker({
      load: async (id, withDecoder) => ({ decoder: withDecoder ? await registry.recordDecoder(id) : null, subjects: registry.subjectsOf(id) }),
    });
    for (const r of meta.list<ValidationRule>(RULE_PREFIX)) this.#rules.set(decodeURIComponent(r.key.slice(RULE_PREFIX.length)), r.value);
    meta.onChange((key, record) => {
      if (key.startsWith(VERSION_PREFIX)) {
        this.#checker.registryChanged();
        for (const w of this.#registryWatchers) w();
      } else if (key.startsWith(RULE_PREFIX)) {
        const stream = decodeURIComponent(key.slice(RULE_PREFIX.length));
        if (record === null) this.#rules.delete(stream);
        else this.#rules.set(stream, record.value as ValidationRule);
        if (this.#watchers.length > 0) this.#told = Promise.all(this.#watchers.map((w) => w(this.rules())));
      }
    });
  }

  /** The streams that carry a rule. */
  streams(): string[] {
    return [...this.#rules.keys()];
  }

  /** Every rule, by stream. */
  rules(): Array<[stream: string, rule: ValidationRule]> {
    return [...this.#rules];
  }

  /**
   * `watcher` is told every rule now and after every rule change, from this node or another; a
   * change made here (`change`, `forget`) resolves only once its promise has. `registryChanged`
   * is told of each registry version change.
   */
  watch(watcher: (rules: Array<[stream: string, rule: ValidationRule]>) => Promise<void>, registryChanged?: () => void): void {
    this.#watchers.push(watcher);
    if (registryChanged !== undefined) this.#registryWatchers.push(registryChanged);
    this.#told = watcher(this.rules());
  }

  /** What a gateway thread compiles schema `id`'s check from, and the subjects it is under now (`withDecoder` false: the subjects alone). */
  async schemaFor(id: number, withDecoder: boolean): Promise<{ source: Outcome<DecoderSource> | null; subjects: string[] }> {
    const source = withDecoder ? await this.#registry.decoderSource(id) : null;
    return { source, subjects: [...this.#registry.subjectsOf(id)] };
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

  check(rule: ValidationRule, records: ReadonlyArray<CheckedRecord>): ReturnType<RecordChecker['check']> {
    return this.#checker.check(rule, records);
  }
}
