#!/usr/bin/env node
// `npm run demo:connectors`: one command runs a node and svc-connectors, with a generator source
// producing 10 records/s to the topic `demo` and a file sink writing them to out.jsonl. Files go
// to a new temporary folder (or DEMO_DIR), never into the checkout; every listener takes a free
// loopback port, and the addresses printed are the ones bound. Ctrl-C stops both and exits 0;
// the demo exits 1 only when one of them stops on its own.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** Ports free now on 127.0.0.1 (all held until every one is chosen, so none is handed out twice). */
async function freePorts(n) {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise((resolve, reject) => s.once('error', reject).listen(0, '127.0.0.1', resolve));
    servers.push(s);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function main() {
  const dir = process.env.DEMO_DIR ? path.resolve(process.env.DEMO_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'svc-connectors-demo-'));
  const [listen, kafka, admin] = await freePorts(3);
  fs.mkdirSync(path.join(dir, 'connectors'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.toml'), `[kafka]\nbootstrap_servers = "127.0.0.1:${kafka}"\n[state]\npath = "${dir}/state"\n[connectors]\nconfig_dir = "${dir}/connectors"\n[http]\naddress = "127.0.0.1:0"\n[http.metrics]\nenabled = true\n`);
  fs.writeFileSync(path.join(dir, 'connectors', 'generator.toml'), `type = "source"\nkey = "generator"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "demo"\n[plugin_config]\nrate = 10\n`);
  fs.writeFileSync(path.join(dir, 'connectors', 'file.toml'), `type = "sink"\nkey = "file"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["demo"]\n[plugin_config]\npath = "${dir}/out.jsonl"\n`);

  const children = [];
  let stopping = false;
  let failed = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  };
  const start = (name, args, env, onLine) => {
    // Its own process group: Ctrl-C reaches the demo only, which stops the children once, in order.
    const c = spawn(process.execPath, args, { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    children.push(c);
    let buf = '';
    c.stdout.on('data', (d) => {
      process.stdout.write(d);
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    c.on('exit', (code, signal) => {
      if (!stopping) {
        failed = true;
        console.error(`demo: ${name} exited (${signal ?? code}); stopping the demo`);
        stop();
      }
      if (children.every((x) => x.exitCode !== null || x.signalCode !== null)) process.exit(failed ? 1 : 0);
    });
    return c;
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  start('the node', [path.join(root, 'dist', 'main.js'), 'serve', '--data-dir', path.join(dir, 'data'), '--listen', `127.0.0.1:${listen}`, '--kafka-listen', `127.0.0.1:${kafka}`, '--admin-listen', `127.0.0.1:${admin}`], {}, () => undefined);
  // The runtime's connections are lazy and its connectors retry, so it may start before the node listens.
  start('svc-connectors', [path.join(root, 'dist', 'connect', 'main.js')], { SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml'), SVC_CONNECTORS_LOGGING__FORMAT: 'json' }, (line) => {
    if (!line.includes('"svc-connectors started"')) return;
    const api = `http://${JSON.parse(line).address}`;
    console.error(`demo: node http://127.0.0.1:${listen} (Kafka 127.0.0.1:${kafka}); records go to ${dir}/out.jsonl; API ${api}/sinks, ${api}/stats, metrics ${api}/metrics. Ctrl-C stops.`);
  });
}

main().catch((err) => {
  console.error(`demo: ${err.message}`);
  process.exit(1);
});
