/**
 * A client command loads the client and nothing of the node: the node's modules (config schema,
 * object store, shards) cost half a second of start-up on every `svc` run that does not need
 * them. The real binary runs with a preload that lists, at exit, every dist/ module it loaded.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ROOT, tempDir } from '../../helpers/node-process';
import { clientEnv, SVC_BIN } from '../../helpers/svc-cli';

/** A loopback port nothing listens on (bound, read, closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function loadedModules(args: string[], env: NodeJS.ProcessEnv): string[] {
  const dir = tempDir('svc-cli-startup-');
  const out = path.join(dir, 'modules.json');
  const preload = path.join(dir, 'preload.js');
  fs.writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  try {
    execFileSync(process.execPath, ['--require', preload, SVC_BIN, ...args], { env, stdio: 'pipe' });
  } catch {
    // the command's exit code is not the point here
  }
  const dist = path.join(ROOT, 'dist') + path.sep;
  return (JSON.parse(fs.readFileSync(out, 'utf8')) as string[]).filter((m) => m.startsWith(dist)).map((m) => m.slice(dist.length));
}

test('a client command starts without loading the node: no config schema, object store or shards', async () => {
  const env = clientEnv({ SVC_URL: `http://127.0.0.1:${await closedPort()}` });
  const client = loadedModules(['head', '/startup'], env);
  expect(client).toContain('main.js');
  expect(client.some((m) => m.startsWith(`cli${path.sep}client${path.sep}`))).toBe(true);
  const nodeParts = client.filter((m) => m === 'config.js' || m === 'node.js' || /^(objects|shards|cluster|gateway)[\\/]/.test(m));
  expect(nodeParts).toEqual([]);
  // The same probe sees the node's modules when a command needs them.
  expect(loadedModules(['serve', '--help'], env)).toContain('config.js');
});
