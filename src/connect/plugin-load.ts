/**
 * Turns a resolved plugin into a SinkPlugin or SourcePlugin: built-in plugins directly, JS
 * modules in their own worker thread by default (jsworker/; `isolation = "in_process"` loads
 * them into the runtime's thread), native libraries through the C ABI (native/, in a
 * supervised child process by default).
 */
import type { Definition } from './definition-schema';
import { parseDuration } from './duration';
import { createWorkerSink, createWorkerSource, importPluginModule } from './jsworker';
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
  if (r.kind === 'js') return importPluginModule(r.file);
  throw new Error('not a JS plugin');
}

export async function loadSink(r: ResolvedPlugin, def: Definition): Promise<SinkPlugin> {
  if (r.kind === 'native') return createNativeSink(r.file, def.isolation, parseDuration(def.plugin_timeout)!);
  if (r.kind === 'js' && def.isolation === 'process') return createWorkerSink(r.file, def.key, parseDuration(def.plugin_timeout)!, { memoryMb: def.memory_limit_mb });
  const m = await moduleOf(r);
  if (m.createSink === undefined) throw new Error(`plugin ${def.path} is not a sink (it exports no createSink)`);
  return m.createSink();
}

export async function loadSource(r: ResolvedPlugin, def: Definition): Promise<SourcePlugin> {
  if (r.kind === 'native') return createNativeSource(r.file, def.isolation, parseDuration(def.plugin_timeout)!);
  if (r.kind === 'js' && def.isolation === 'process') return createWorkerSource(r.file, def.key, parseDuration(def.plugin_timeout)!, { memoryMb: def.memory_limit_mb });
  const m = await moduleOf(r);
  if (m.createSource === undefined) throw new Error(`plugin ${def.path} is not a source (it exports no createSource)`);
  return m.createSource();
}
