/**
 * Resolves a definition's `path` to a plugin (spec "Plugin `path`", startup step 4).
 * - An absolute path: that file; `.so` is a native library, `.js`/`.mjs`/`.cjs` a JS module.
 * - A name: first the plugins built into the runtime (docs/connectors.md lists them), then
 *   `<name>.so` in this order: (1) the runtime executable's directory; (2) the working
 *   directory; (3) /usr/lib, /usr/lib64, /lib, /lib64; (4) /usr/local/lib, /usr/local/lib64.
 * A name found nowhere is an error listing every path searched, in that order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const BUILTIN = ['stdout_sink', 'file_sink', 'file_source', 'generator_source', 'http_sink', 'postgres_sink', 'postgres_source'] as const;
export type BuiltinName = (typeof BUILTIN)[number];

export type ResolvedPlugin = { kind: 'builtin'; name: BuiltinName } | { kind: 'js'; file: string } | { kind: 'native'; file: string };

export const PLATFORM_EXT = process.platform === 'darwin' ? '.dylib' : process.platform === 'win32' ? '.dll' : '.so';
const SYSTEM_DIRS = ['/usr/lib', '/usr/lib64', '/lib', '/lib64'];
const LOCAL_DIRS = ['/usr/local/lib', '/usr/local/lib64'];

/** The directories a name is searched in, in the spec's order. */
export function searchDirs(exeDir: string, cwd: string): string[] {
  return [exeDir, cwd, ...SYSTEM_DIRS, ...LOCAL_DIRS];
}

export function resolvePlugin(p: string, exeDir: string, cwd: string = process.cwd()): { plugin: ResolvedPlugin } | { error: string } {
  if (path.isAbsolute(p)) {
    if (!fs.existsSync(p)) return { error: `plugin not found: ${p}` };
    return { plugin: /\.(c|m)?js$/.test(p) ? { kind: 'js', file: p } : { kind: 'native', file: p } };
  }
  if (p.includes('/')) return { error: `plugin path ${JSON.stringify(p)}: give an absolute path or a library name without directory and extension` };
  const short = p.replace(/^libsvc_connector_/, '');
  if ((BUILTIN as readonly string[]).includes(short) && p.startsWith('libsvc_connector_')) return { plugin: { kind: 'builtin', name: short as BuiltinName } };
  const tried: string[] = [];
  for (const dir of searchDirs(exeDir, cwd)) {
    const file = path.join(dir, p + PLATFORM_EXT);
    tried.push(file);
    if (fs.existsSync(file)) return { plugin: { kind: 'native', file } };
  }
  return { error: `plugin ${JSON.stringify(p)} not found; searched, in order:\n      ${tried.join('\n      ')}` };
}
