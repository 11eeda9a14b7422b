/** The JSON shapes the HTTP API returns (docs/connectors.md "HTTP API"). */
import type { Definition } from './definition-schema';
import { redact } from './redact';
import type { Counters, LastError } from './connector-state';
import { activeDefinition, type Connector, partitionsOf } from './runtime';
import type { PartitionProgress } from './sink-progress';

export interface ConnectorView {
  id: string;
  key: string;
  type: 'sink' | 'source';
  name: string;
  path: string;
  enabled: boolean;
  version: number;
  status: string;
  last_error: { message: string; time: string } | null;
}

export function connectorView(c: Connector): ConnectorView {
  const d = activeDefinition(c);
  return { id: c.id, key: c.key, type: c.type, name: d.name, path: d.path, enabled: d.enabled, version: d.version, status: c.status, last_error: c.last_error };
}

export function connectorDetail(c: Connector): ConnectorView & { topics: Definition['topics']; batch: Definition['batch']; error_policy: Definition['error']; isolation: string } {
  const d = activeDefinition(c);
  return { ...connectorView(c), topics: d.topics, batch: d.batch, error_policy: d.error, isolation: d.isolation };
}

/** One connector in GET /stats: status, counters and, for a sink, where it stands per partition. */
export type ConnectorStats = { key: string; type: 'sink' | 'source'; status: string; last_error: LastError | null } & Counters & {
  /** Sum over the sink's partitions (0 for a source). */
  lag_records: number;
  /** The largest over the sink's partitions (0 for a source). */
  lag_seconds: number;
  partitions: PartitionProgress[];
};

export function connectorStats(c: Connector): ConnectorStats {
  const partitions = partitionsOf(c);
  return {
    key: c.key,
    type: c.type,
    status: c.status,
    last_error: c.last_error,
    ...c.counters,
    lag_records: partitions.reduce((n, p) => n + p.lag_records, 0),
    lag_seconds: partitions.reduce((n, p) => Math.max(n, p.lag_seconds), 0),
    partitions,
  };
}

/** A stored version as the configs endpoints show it: the definition with plugin_config redacted. */
export function versionView(c: Connector, version: number): Record<string, unknown> | null {
  const v = c.versions.versions.get(version);
  if (v === undefined) return null;
  return { version, active: c.versions.active === version, created: new Date(v.created).toISOString(), definition: { ...v.definition, plugin_config: redact(v.definition.plugin_config) } };
}
