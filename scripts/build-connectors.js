#!/usr/bin/env node
// Builds the native plugins that ship with svc-connectors (src/connect/native/plugins/*.c)
// with gcc into dist/connect/, the runtime's own directory (plugin search step 1), and copies
// the SDK header beside them. Run by `npm run build` after tsc.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const src = path.join(root, 'src', 'connect', 'native', 'plugins');
const out = path.join(root, 'dist', 'connect');
fs.mkdirSync(out, { recursive: true });
const cc = process.env.CC || 'gcc';
for (const name of fs.readdirSync(src).filter((n) => n.endsWith('.c'))) {
  const lib = path.join(out, `libsvc_connector_${name.replace(/\.c$/, '')}.so`);
  try {
    execFileSync(cc, ['-shared', '-fPIC', '-O2', '-Wall', '-Wextra', '-o', lib, path.join(src, name)], { stdio: 'inherit' });
  } catch (err) {
    // No C compiler: the node, the client and svc-cache need none, so the build goes on without the
    // native plugins (JS plugins still load); a compile error is a real failure.
    if (err.code !== 'ENOENT') throw err;
    console.warn(`build-connectors: ${cc} not found; the native connector plugins (${name}) are not built (install a C compiler for them)`);
    break;
  }
}
fs.mkdirSync(path.join(out, 'sdk'), { recursive: true });
fs.copyFileSync(path.join(root, 'src', 'connect', 'sdk', 'svc_connector.h'), path.join(out, 'sdk', 'svc_connector.h'));
