/**
 * The schema registry's front door (docs/schema-registry.md): a Confluent-compatible Schema
 * Registry whose ids, subjects and settings live in the node's metadata store.
 *
 *   client ──HTTP──▶ (auth guard) ──▶ http/routes.ts ──▶ SchemaRegistry (registry.ts)
 *                                                          ├─ formats/: AVRO (avsc), JSON (ajv), PROTOBUF (protobufjs)
 *                                                          ├─ compatibility.ts: levels → reader/writer checks
 *                                                          └─ RegistryStore (store.ts) ──▶ MetaStore (local or etcd)
 */
import { type MetaStore } from '../actors';
import { type RequestHandler } from '../program/http';
import { createRegistryHandler } from './http/routes';
import { type RegistryOptions, SchemaRegistry } from './registry';
import { RegistryStore } from './store';

export { SchemaRegistry, type RegistryOptions } from './registry';
export { CONTENT_TYPE as REGISTRY_CONTENT_TYPE } from './http/routes';
export { type CompatibilityLevel, type SchemaType } from './types';
export { SVC_SUBJECT_PREFIX, SvcSchemaView, svcSubject } from './svc-view';

/** The registry over `meta`, and its HTTP handler. */
export function openSchemaRegistry(meta: MetaStore, options: RegistryOptions = {}): { registry: SchemaRegistry; handler: RequestHandler } {
  const registry = new SchemaRegistry(new RegistryStore(meta), options);
  return { registry, handler: createRegistryHandler(registry) };
}

/** The registry's 500 for a failure the handler did not expect (the shield's reply on this listener). */
export function registryInternalReply(requestId: string): { status: number; headers: Array<readonly [string, string]>; body: string } {
  return {
    status: 500,
    headers: [
      ['content-type', 'application/vnd.schemaregistry.v1+json'],
      ['svc-request-id', requestId],
    ],
    body: JSON.stringify({ error_code: 50001, message: `internal error (request id ${requestId})` }),
  };
}
export { SchemaValidation } from './validation';
export { type AskSchema, ThreadValidation } from './thread-validation';
export { type DecoderSource } from './registry';
