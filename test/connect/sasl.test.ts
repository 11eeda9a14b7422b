/**
 * Toward a node with `--auth required`, the runtime authenticates with SASL/PLAIN and the node's
 * access token as the password (spec "Authentication"), given here through the environment; the
 * token never appears in the runtime's output.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const TOKEN = `${Buffer.from('kafka-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;

describe('SASL toward the node', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--auth', 'required', '--auth-bootstrap-token', TOKEN] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('with the access token as sasl.password, records flow from a source to a sink through an authenticating node', async () => {
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\nsecurity_protocol = "sasl_plaintext"\n[kafka.sasl]\nmechanism = "plain"\nusername = "svc"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
      connectors: {
        'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "sasl-flow"\n[plugin_config]\nrate = 0\ncount = 1000\n`,
        'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["sasl-flow"]\n[plugin_config]\npath = "{dir}/out"\n`,
      },
    });
    const rt = await startRuntime(dir, { SVC_CONNECTORS_KAFKA__SASL__PASSWORD: TOKEN });
    const out = path.join(dir, 'out');
    await waitFor(() => fs.existsSync(out) && fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).length === 1000, '1000 records through the authenticating node');
    expect(rt.output()).not.toContain(TOKEN);
    expect(rt.output()).toContain('"password":"***"');
    await rt.stop();
  });
});
