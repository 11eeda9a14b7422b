/**
 * Connections are lazy (spec startup step 2): with a bootstrap address where nothing listens
 * the runtime still starts; the sink stays running with nothing consumed and logs fetch errors;
 * the source fails its produces and goes to error after thirty consecutive nacks, with no
 * checkpoint saved.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('an unreachable node: the runtime starts, the sink logs fetch errors, the source goes to error after 30 consecutive nacks', async () => {
  const port = await closedPort();
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "127.0.0.1:${port}"\n[kafka.properties]\nretries = 0\nconnection_timeout_ms = 100\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
    connectors: {
      'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "nowhere"\n[plugin_config]\nrate = 0\n[error]\ninitial_backoff = "1ms"\nmax_backoff = "5ms"\n`,
      'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_stdout_sink"\n[[topics]]\nnames = ["nowhere"]\n`,
    },
  });
  const rt = await startRuntime(dir);
  await waitFor(async () => ((await (await fetch(`${rt.url}/sources/gen`)).json()) as { status: string }).status === 'error', 'the source is in error', 60000);
  const src = (await (await fetch(`${rt.url}/sources/gen`)).json()) as { last_error: { message: string } };
  expect(src.last_error.message).toMatch(/^30 consecutive produce failures; last: /);
  const stats = (await (await fetch(`${rt.url}/stats`)).json()) as { connectors: { key: string; produced: number; sent: number; consumed: number; status: string }[] };
  expect(stats.connectors.find((c) => c.key === 'gen')).toMatchObject({ sent: 0 });
  expect(stats.connectors.find((c) => c.key === 'out')).toMatchObject({ status: 'running', consumed: 0 });
  expect(rt.output()).toContain('fetch error: cannot join the consumer group');
  expect(fs.existsSync(path.join(dir, 'state', 'gen.state'))).toBe(false);
  await rt.stop();
});
