/**
 * The HTTP engines a test can run on this runtime. uWebSockets.js 20.30 ships binaries for
 * Node 18 and 20 only; where its binary for this Node ABI is missing (Node 22 and later) the node
 * serves with node:http whatever `--http-engine` says, so a "uws" run would only repeat the "node"
 * one. On Node 20 both engines run; on the current LTS (CI's second runtime) only `node`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export type Engine = 'uws' | 'node';

/** Whether uWS has a binary for this Node version and platform (the file uws-engine.ts loads). */
export function uwsLoads(): boolean {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  return fs.existsSync(path.join(ROOT, 'node_modules', '@trufflesuite', 'uws-js-unofficial', 'binaries', file));
}

/** Every engine this runtime serves with: both on Node 20, `node` alone where uWS does not load. */
export const ENGINES: readonly Engine[] = uwsLoads() ? ['uws', 'node'] : ['node'];
