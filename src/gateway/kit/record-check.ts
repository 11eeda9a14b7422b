/**
 * Schema validation of an HTTP append (docs/schema-registry.md, "Validation at the broker"): the
 * Svc and Durable Streams listeners check a validated stream's records with this before the shard
 * hop, and refuse the whole append when one fails (`record_invalid`, 422, naming the record).
 */
import { SvcError } from '../../errors';
import { type RecordValidation, type ValidationRule } from '../../util/validation-rule';

/** What a listener checks: record `index` of batch `batch` (one batch for a plain append). */
export type CheckedRecord = { batch: number; index: number; key: Buffer | null; value: Buffer | null };

/** Throws `record_invalid` naming the first record `rule` refuses (records counted across the append's batches). */
export async function checkRecords(validation: RecordValidation, rule: ValidationRule, records: readonly CheckedRecord[]): Promise<void> {
  const checked = validation.check(rule, records);
  const refused = checked instanceof Promise ? await checked : checked;
  const first = refused[0];
  if (first === undefined) return;
  const at = records.findIndex((r) => r.batch === first.batch && r.index === first.index);
  const more = refused.length > 1 ? ` (and ${refused.length - 1} more)` : '';
  throw new SvcError('record_invalid', `records[${at}]: ${first.reason}${more}`, { record: at, part: first.part });
}
