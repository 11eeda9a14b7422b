/**
 * Connections are lazy (spec startup step 2): with a bootstrap address where nothing listens
 * the runtime still starts; the sink is degraded with nothing consumed and logs fetch errors;
 * the source fails its produces and is degraded, retrying with backoff (never error), with no
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

test('an unreachable node: the runtime starts, the sink logs fetch errors, both are degraded and keep retrying', async () => {
  const port = await closedPort();
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "127.0.0.1:${port}"\n[kafka.properties]\nretries = 0\nconnection_timeout_ms = 100\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
    connectors: {
      'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "nowhere"\n[plugin_config]\nrate = 0\n[error]\ninitial_backoff = "1ms"\nmax_backoff = "5ms"\n`,
      'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_stdout_sink"\n[[topics]]\nnames = ["nowhere"]\n`,
    },
  });
  const rt = await startRuntime(dir);
  await waitFor(async () => {
    const v = (await (await fetch(`${rt.url}/sources/gen`)).json()) as { status: string; last_error: { message: string } | null };
    return v.status === 'degraded' && /^3\d consecutive produce failures; last: /.test(v.last_error?.message ?? '');
  }, 'the source degraded past 30 nacks', 60000);
  expect(((await (await fetch(`${rt.url}/sources/gen`)).json()) as { status: string }).status).toBe('degraded');
  const stats = (await (await fetch(`${rt.url}/stats`)).json()) as { connectors: { key: string; produced: number; sent: number; consumed: number; status: string }[] };
  expect(stats.connectors.find((c) => c.key === 'gen')).toMatchObject({ sent: 0 });
  expect(stats.connectors.find((c) => c.key === 'out')).toMatchObject({ status: 'degraded', consumed: 0 });
  expect(rt.output()).toContain('fetch error: cannot join the consumer group');
  expect(fs.existsSync(path.join(dir, 'state', 'gen.state'))).toBe(false);
  await rt.stop();
});
