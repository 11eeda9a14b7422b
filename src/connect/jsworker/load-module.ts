/** Imports a JS plugin module (CommonJS or ES module) and finds its createSink / createSource. */
import type { PluginModule } from '../plugin-api';

export async function importPluginModule(file: string): Promise<PluginModule> {
  // import() loads both module kinds; a CommonJS module's exports may sit under `default`.
  const m = (await import(file)) as PluginModule & { default?: PluginModule };
  return m.createSink !== undefined || m.createSource !== undefined ? m : (m.default ?? m);
}
