#!/usr/bin/env node
// Makes `npm start` and `npm test` work straight after cloning (they run this first):
//   1. install dependencies with `npm ci` when node_modules is missing or older than
//      package-lock.json (npm writes node_modules/.package-lock.json on every install);
//   2. build src/ into dist/ with tsc (incremental, so an unchanged tree takes a moment).
// Plain CommonJS without dependencies: it has to run before anything is installed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const lockFile = path.join(root, 'package-lock.json');
const installedLock = path.join(root, 'node_modules', '.package-lock.json');

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function run(command, args, what) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) {
    console.error(`prepare: ${what} could not start: ${result.error.message}`);
    process.exit(1);
  }
  if (result.status !== 0) {
    console.error(`prepare: ${what} failed (${result.signal ?? 'exit code ' + result.status})`);
    process.exit(result.status || 1);
  }
}

function needsInstall() {
  const installed = mtime(installedLock);
  if (installed === undefined) return 'node_modules is missing or incomplete';
  const lock = mtime(lockFile);
  if (lock !== undefined && lock > installed) return 'package-lock.json is newer than node_modules';
  return null;
}

const reason = needsInstall();
if (reason) {
  console.error(`prepare: ${reason}; running npm ci`);
  run('npm', ['ci'], 'npm ci');
}

// Same as `npx tsc -p tsconfig.build.json`, without npx's start-up cost.
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], 'build (tsc -p tsconfig.build.json)');
// svc-connectors' shipped native plugins (gcc), beside the runtime in dist/connect/.
run(process.execPath, [path.join(root, 'scripts', 'build-connectors.js')], 'build of the native connector plugins (gcc)');
