/** The JSON shapes the HTTP API returns (docs/connectors.md "HTTP API"). */
import type { Definition } from './definition-schema';
import { redact } from './redact';
import { activeDefinition, type Connector } from './runtime';

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

/** A stored version as the configs endpoints show it: the definition with plugin_config redacted. */
export function versionView(c: Connector, version: number): Record<string, unknown> | null {
  const v = c.versions.versions.get(version);
  if (v === undefined) return null;
  return { version, active: c.versions.active === version, created: new Date(v.created).toISOString(), definition: { ...v.definition, plugin_config: redact(v.definition.plugin_config) } };
}
