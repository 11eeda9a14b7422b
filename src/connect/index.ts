/** svc-connectors' front door: what tests and tools may use. The program itself is main.ts. */
export { loadConfig, validateConfig, ConfigError, type ConnectorsConfig } from './config';
export { loadDefinitions, validateDefinition, DefinitionError } from './definitions';
export { parseEnvValue, applyConfigEnv, applyConnectorEnv, envKey } from './env-overrides';
export { resolvePlugin, searchDirs, PLATFORM_EXT } from './plugin-resolve';
export { applyTransforms } from './transforms';
export { FileStateStore } from './state-store';
export { redact, REDACTED } from './redact';
export { levelFromEnv } from './log';
export { sinkGroup } from './sink-runner';
export { decodeCheckpoint, SOURCE_HEADER } from './source-position';
export type { SinkPlugin, SourcePlugin, SinkRecord, SourceRecord, RecordResult } from './plugin-api';
