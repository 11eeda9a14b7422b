/**
 * Schema validation at the broker (docs/schema-registry.md, "Validation at the broker"): what a
 * stream or topic requires of its records, shared by the edges that set and enforce it (the Kafka
 * listener, the protocol listener) and the registry that checks records against it. Only types
 * and the names clients know live here; the checking is `src/registry/validation/`.
 *
 * Names follow Confluent Server's topic configs, which Kafka users already set:
 *   confluent.value.schema.validation, confluent.key.schema.validation   true | false
 *   confluent.value.subject.name.strategy, confluent.key.subject.name.strategy
 *       io.confluent.kafka.serializers.subject.TopicNameStrategy (default) | RecordNameStrategy | TopicRecordNameStrategy
 * and one of this product's own: svc.schema.validation.dead.letter (a stream name, or empty).
 */

/** How a record's subject is named (Confluent's serializers' `*.subject.name.strategy`). */
export type SubjectNameStrategy = 'topic' | 'record' | 'topic-record';

const STRATEGY_PACKAGE = 'io.confluent.kafka.serializers.subject.';
const STRATEGY_CLASSES: Readonly<Record<SubjectNameStrategy, string>> = {
  topic: `${STRATEGY_PACKAGE}TopicNameStrategy`,
  record: `${STRATEGY_PACKAGE}RecordNameStrategy`,
  'topic-record': `${STRATEGY_PACKAGE}TopicRecordNameStrategy`,
};

/** The class name clients know for `s`. */
export function strategyClass(s: SubjectNameStrategy): string {
  return STRATEGY_CLASSES[s];
}

/** A strategy from its class name (full or short) or this product's short name; null: unknown. */
export function parseStrategy(text: string): SubjectNameStrategy | null {
  for (const [s, cls] of Object.entries(STRATEGY_CLASSES) as Array<[SubjectNameStrategy, string]>) {
    if (text === s || text === cls || text === cls.slice(STRATEGY_PACKAGE.length)) return s;
  }
  return null;
}

/** What a stream requires of the records appended to it. */
export interface ValidationRule {
  /** Values must carry a registered schema id (subject by `valueStrategy`) and decode against it. */
  value: boolean;
  /** Keys likewise (`keyStrategy`). */
  key: boolean;
  valueStrategy: SubjectNameStrategy;
  keyStrategy: SubjectNameStrategy;
  /** Where refused records go instead of failing the append; null: they fail it. */
  deadLetter: string | null;
  /** The topic name subjects are named after (`<topic>-value`): the Kafka topic of the stream. */
  topic: string;
}

/** A change of a rule: absent fields stay, null goes back to the default. */
export interface ValidationChange {
  value?: boolean | null;
  key?: boolean | null;
  valueStrategy?: SubjectNameStrategy | null;
  keyStrategy?: SubjectNameStrategy | null;
  deadLetter?: string | null;
}

export const NO_VALIDATION: Omit<ValidationRule, 'topic'> = { value: false, key: false, valueStrategy: 'topic', keyStrategy: 'topic', deadLetter: null };

/** `rule` (or the defaults) with `change` applied; null when nothing is left to validate. */
export function applyValidationChange(rule: ValidationRule | null, change: ValidationChange, topic: string): ValidationRule | null {
  const base = rule ?? { ...NO_VALIDATION, topic };
  const pick = <K extends keyof ValidationChange>(k: K): NonNullable<ValidationChange[K]> | (typeof NO_VALIDATION)[K] => {
    const v = change[k];
    if (v === undefined) return base[k] as (typeof NO_VALIDATION)[K];
    return v === null ? NO_VALIDATION[k] : (v as NonNullable<ValidationChange[K]>);
  };
  const next: ValidationRule = { value: pick('value'), key: pick('key'), valueStrategy: pick('valueStrategy'), keyStrategy: pick('keyStrategy'), deadLetter: pick('deadLetter'), topic };
  const isDefault = !next.value && !next.key && next.valueStrategy === 'topic' && next.keyStrategy === 'topic' && next.deadLetter === null;
  return isDefault ? null : next;
}

/** One record a rule refused: where it is in the append and why. */
export interface RefusedRecord {
  /** Index of the record among the append's records (Kafka: within its batch, as `recordErrors.batchIndex`). */
  index: number;
  /** Index of its batch in the append (0 for HTTP single records). */
  batch: number;
  /** `key` or `value`. */
  part: 'key' | 'value';
  reason: string;
}

/**
 * The validation service the edges are handed (src/node.ts builds it over the registry). `rule`
 * is a map lookup: unvalidated streams cost nothing more.
 */
export interface RecordValidation {
  /** The stream's rule, or null: appends are not validated. */
  rule(stream: string): ValidationRule | null;
  /** Change the rule of each stream (the partitions of one topic share it); resolves once stored. */
  change(streams: readonly string[], topic: string, change: ValidationChange): Promise<void>;
  /** Forget the rules of deleted streams. */
  forget(streams: readonly string[]): Promise<void>;
  /** Why each record fails `rule` (empty: all pass); `records[i]` is `{key, value}` of record i of batch `batch`. */
  check(rule: ValidationRule, records: ReadonlyArray<{ batch: number; index: number; key: Buffer | null; value: Buffer | null }>): Promise<RefusedRecord[]> | RefusedRecord[];
}

/** Headers a dead-lettered record gets (after its own). */
export const DEAD_LETTER_HEADERS = {
  reason: 'svc.validation.reason',
  stream: 'svc.validation.stream',
  part: 'svc.validation.part',
} as const;
