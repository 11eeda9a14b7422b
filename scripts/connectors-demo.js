#!/usr/bin/env node
// `npm run demo:connectors`: one command runs a node and svc-connectors on their embedded
// defaults (node: protocol 127.0.0.1:4437, Kafka 127.0.0.1:9092, admin 127.0.0.1:9090; runtime
// API 127.0.0.1:8081 with metrics), with a generator source producing 10 records/s to the
// topic `demo` and a file sink writing them to ./connectors-demo/out.jsonl. Ctrl-C stops both.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dir = path.resolve(process.env.DEMO_DIR || 'connectors-demo');
fs.mkdirSync(path.join(dir, 'connectors'), { recursive: true });
fs.writeFileSync(path.join(dir, 'config.toml'), `[kafka]\nbootstrap_servers = "127.0.0.1:9092"\n[state]\npath = "${dir}/state"\n[connectors]\nconfig_dir = "${dir}/connectors"\n[http.metrics]\nenabled = true\n`);
fs.writeFileSync(path.join(dir, 'connectors', 'generator.toml'), `type = "source"\nkey = "generator"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "demo"\n[plugin_config]\nrate = 10\n`);
fs.writeFileSync(path.join(dir, 'connectors', 'file.toml'), `type = "sink"\nkey = "file"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["demo"]\n[plugin_config]\npath = "${dir}/out.jsonl"\n`);

const children = [];
const start = (args, env) => {
  const c = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  children.push(c);
  c.on('exit', (code) => {
    console.error(`${path.basename(args[0])} exited (${code}); stopping the demo`);
    stop();
  });
  return c;
};
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const node = start([path.join(root, 'dist', 'main.js'), 'serve', '--data-dir', path.join(dir, 'data')]);
// The runtime's connections are lazy, so it may start before the node listens; give the node a moment anyway.
setTimeout(() => {
  if (stopping) return;
  start([path.join(root, 'dist', 'connect', 'main.js')], { SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml') });
  console.error(`demo: records go to ${dir}/out.jsonl; API http://127.0.0.1:8081/sinks, metrics http://127.0.0.1:8081/metrics`);
}, 1500);
void node;
