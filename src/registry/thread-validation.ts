/**
 * Schema validation on a gateway thread (docs/schema-registry.md, "Where it runs"): the rules as
 * the main thread's SchemaValidation sends them after each change (acknowledged there before a rule
 * change is answered), and the record check (record-checker.ts) over schemas the main thread sends
 * on request, compiled here. The registry and the rules' store stay on the main thread: a rule
 * is changed or forgotten there (the threads send it those requests: a stream's config, its
 * create and delete).
 */
import { SvcError } from '../errors';
import { type RecordValidation, type ValidationRule } from '../util/validation-rule';
import { type CheckedRecord, RecordChecker } from './record-checker';
import { type DecoderSource, buildRecordDecoder } from './registry';
import { type Outcome } from './types';

/** Asks the main thread for schema `id` (validation.ts, `schemaFor`). */
export type AskSchema = (id: number, withDecoder: boolean) => Promise<{ source: Outcome<DecoderSource> | null; subjects: string[] }>;

export class ThreadValidation implements RecordValidation {
  #rules = new Map<string, ValidationRule>();
  readonly #checker: RecordChecker;

  constructor(ask: AskSchema) {
    this.#checker = new RecordChecker({
      load: async (id, withDecoder) => {
        const got = await ask(id, withDecoder);
        return { decoder: got.source === null ? null : got.source.ok ? buildRecordDecoder(got.source.value) : got.source, subjects: new Set(got.subjects) };
      },
    });
  }

  /** Every rule, as the main thread holds them now. */
  setRules(rules: ReadonlyArray<[stream: string, rule: ValidationRule]>): void {
    this.#rules = new Map(rules);
  }

  /** A registry version changed: which subjects an id is under is asked again. */
  registryChanged(): void {
    this.#checker.registryChanged();
  }

  /** Whether `stream` has a rule. */
  has(stream: string): boolean {
    return this.#rules.has(stream);
  }

  get size(): number {
    return this.#rules.size;
  }

  rule(stream: string): ValidationRule | null {
    return this.#rules.get(stream) ?? null;
  }

  change(): Promise<void> {
    return Promise.reject(new SvcError('internal', 'a validation rule is changed on the main thread (the gateway threads send it those requests)'));
  }

  /** A delete served here forgets nothing: a stream with a rule is deleted on the main thread (the gateway threads send it those requests). */
  forget(streams: readonly string[]): Promise<void> {
    if (!streams.some((s) => this.#rules.has(s))) return Promise.resolve();
    return Promise.reject(new SvcError('internal', 'a validation rule is forgotten on the main thread (the gateway threads send it those requests)'));
  }

  check(rule: ValidationRule, records: ReadonlyArray<CheckedRecord>): ReturnType<RecordChecker['check']> {
    return this.#checker.check(rule, records);
  }
}
