/**
 * Turns a resolved plugin into a SinkPlugin or SourcePlugin: built-in and JS modules directly,
 * native libraries through the C ABI (native/, in a supervised child process by default).
 */
import type { Definition } from './definition-schema';
import { parseDuration } from './duration';
import { createNativeSink, createNativeSource } from './native';
import type { PluginModule, SinkPlugin, SourcePlugin } from './plugin-api';
import type { BuiltinName, ResolvedPlugin } from './plugin-resolve';
import * as fileSink from './plugins/file-sink';
import * as fileSource from './plugins/file-source';
import * as generatorSource from './plugins/generator-source';
import * as httpSink from './plugins/http-sink';
import * as postgresSink from './plugins/postgres-sink';
import * as postgresSource from './plugins/postgres-source';
import * as stdoutSink from './plugins/stdout-sink';

const BUILTINS: Record<BuiltinName, PluginModule> = {
  stdout_sink: stdoutSink,
  file_sink: fileSink,
  file_source: fileSource,
  generator_source: generatorSource,
  http_sink: httpSink,
  postgres_sink: postgresSink,
  postgres_source: postgresSource,
};

async function moduleOf(r: ResolvedPlugin): Promise<PluginModule> {
  if (r.kind === 'builtin') return BUILTINS[r.name];
  if (r.kind === 'js') {
    // A JS plugin may be CommonJS or an ES module; import() loads both.
    const m = (await import(r.file)) as PluginModule & { default?: PluginModule };
    return m.createSink !== undefined || m.createSource !== undefined ? m : (m.default ?? m);
  }
  throw new Error('not a JS plugin');
}

export async function loadSink(r: ResolvedPlugin, def: Definition): Promise<SinkPlugin> {
  if (r.kind === 'native') return createNativeSink(r.file, def.isolation, parseDuration(def.plugin_timeout)!);
  const m = await moduleOf(r);
  if (m.createSink === undefined) throw new Error(`plugin ${def.path} is not a sink (it exports no createSink)`);
  return m.createSink();
}

export async function loadSource(r: ResolvedPlugin, def: Definition): Promise<SourcePlugin> {
  if (r.kind === 'native') return createNativeSource(r.file, def.isolation, parseDuration(def.plugin_timeout)!);
  const m = await moduleOf(r);
  if (m.createSource === undefined) throw new Error(`plugin ${def.path} is not a source (it exports no createSource)`);
  return m.createSource();
}
