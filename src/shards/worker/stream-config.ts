/**
 * A stream's config (docs/protocol.md "Stream config"): its schema binding, whether appends are
 * validated, its explicit Kafka topic, its TTL, its durability class. Set at create (Svc-Schema,
 * Svc-Schema-Validate, Svc-Kafka-Topic, Svc-Durability) and changed with PATCH /_streams/{name}, which the shard writes to its log as a
 * CONFIG frame holding the changed fields (replay applies it as a patch over the meta).
 *
 * The rules live here so the shard only hooks them in: a bound schema must be registered on this
 * thread, and validation needs a bound schema.
 */
import { SvcError } from '../../errors';
import { type RecordInput } from '../../util/record-batch';
import { type SchemaRegistry } from '../schema-registry';
import { type ConfigureParams, type CreateParams } from '../types';
import { type MetaPatch, type StreamMeta } from './stream-meta';

type ConfigFields = Pick<StreamMeta, 'schema' | 'schemaValidate' | 'kafkaTopic' | 'idleTtlSeconds' | 'fork' | 'durability'>;

/**
 * Objects mode acknowledges an append once its object is stored and the ledger commit made
 * (object-commit.ts): that is what lets a stream move to another node without losing what was
 * acknowledged, so `async` (acknowledged before either) is not offered there (docs/storage.md,
 * "Durability classes").
 */
export const ASYNC_IN_OBJECTS_MODE = 'durability async is not offered with --objects: an append is acknowledged once its object is stored and the ledger commit made, so that the stream can move to another node without losing it';

function checkDurability(d: string | null | undefined, objectsMode: boolean): void {
  if (d === 'async' && objectsMode) throw new SvcError('invalid_parameter', ASYNC_IN_OBJECTS_MODE);
}

function checkBinding(schema: string | null, validate: boolean, registry: SchemaRegistry | undefined): void {
  if (validate && schema === null) throw new SvcError('invalid_parameter', 'Svc-Schema-Validate: true needs Svc-Schema');
  if (schema !== null && registry?.has(schema) !== true) throw new SvcError('invalid_parameter', `Svc-Schema: no schema named ${schema} is registered`);
}

/** The config fields of a new stream's meta (create parameters are optional; the meta is normalised). */
export function createConfig(p: CreateParams, registry: SchemaRegistry | undefined, objectsMode = false): ConfigFields {
  const schema = p.schema ?? null;
  const validate = p.schemaValidate ?? false;
  checkBinding(schema, validate, registry);
  checkDurability(p.durability, objectsMode);
  return { schema, schemaValidate: validate, kafkaTopic: p.kafkaTopic ?? null, idleTtlSeconds: p.idleTtlSeconds ?? null, fork: p.fork ?? null, durability: p.durability ?? null };
}

/**
 * The meta after a config change, and the patch the CONFIG frame stores (only fields that
 * change; empty when nothing does).
 */
export function planConfig(meta: StreamMeta, p: ConfigureParams, registry: SchemaRegistry | undefined, objectsMode = false): { next: StreamMeta; patch: MetaPatch } {
  const patch: MetaPatch = {};
  checkDurability(p.durability, objectsMode);
  if (p.durability !== undefined && p.durability !== meta.durability) patch.durability = p.durability;
  if (p.schema !== undefined && p.schema !== meta.schema) patch.schema = p.schema;
  if (p.schemaValidate !== undefined && p.schemaValidate !== meta.schemaValidate) patch.schemaValidate = p.schemaValidate;
  if (p.kafkaTopic !== undefined && p.kafkaTopic !== meta.kafkaTopic) patch.kafkaTopic = p.kafkaTopic;
  if (p.ttlSeconds !== undefined && p.ttlSeconds !== meta.ttlSeconds) patch.ttlSeconds = p.ttlSeconds;
  // The count itself is logged, not the delta, so replaying a CONFIG frame twice changes nothing.
  if (p.forkRefsDelta !== undefined && p.forkRefsDelta !== 0) patch.forkRefs = Math.max(0, meta.forkRefs + p.forkRefsDelta);
  if (p.softDeleted !== undefined && p.softDeleted !== meta.softDeleted) patch.softDeleted = p.softDeleted;
  const next = { ...meta, ...patch };
  // A schema named again is checked again, even when it is the one bound: it must still exist.
  const schema = next.schema;
  if (p.schema !== undefined && p.schema !== null && registry?.has(p.schema) !== true) {
    throw new SvcError('invalid_parameter', `schema: no schema named ${p.schema} is registered`);
  }
  if (next.schemaValidate && schema === null) {
    throw new SvcError('invalid_parameter', 'schemaValidate: true needs a bound schema (set schema, or set schemaValidate to false with it)');
  }
  return { next, patch };
}

/** Refuse the append when the stream validates and a record does not match (nothing is written). */
export function validateRecords(meta: StreamMeta, registry: SchemaRegistry | undefined, records: readonly RecordInput[] | null, batches: readonly Buffer[]): void {
  if (!meta.schemaValidate || meta.schema === null) return;
  if (registry === undefined) throw new SvcError('internal', 'schema validation is not available on this shard');
  registry.validateAppend(meta.schema, records, batches);
}
