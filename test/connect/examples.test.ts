/**
 * The example plugins in examples/connectors build and run: the C source compiled with gcc
 * against the SDK header the build ships (dist/connect/sdk), the JS sink type-checked against
 * the shipped sdk/svc-connector-plugin.d.ts, and both run through the runtime against a node.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, ROOT, startNode, tempDir } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const EXAMPLES = path.join(ROOT, 'examples', 'connectors');

let node: NodeProcess;
beforeAll(async () => {
  node = await startNode({ args: ['--no-admin', '--shards', '1', '--shard-workers', '1'] });
});
afterAll(async () => {
  await node?.stop();
});

test('the shipped .d.ts types the example JS sink', () => {
  expect(fs.existsSync(path.join(ROOT, 'dist', 'connect', 'sdk', 'svc-connector-plugin.d.ts'))).toBe(true);
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '--noEmit', '--allowJs', '--checkJs', '--strict', '--types', 'node', '--skipLibCheck', path.join(EXAMPLES, 'js-jsonl-sink', 'jsonl-sink.js')], { cwd: ROOT, stdio: 'pipe' });
});

test('the example C source (built with gcc) and JS sink run through the runtime: every record arrives', async () => {
  const COUNT = 500;
  const build = tempDir('svc-connect-ex-');
  const lib = path.join(build, 'libsvc_connector_ticker_source.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-Wall', '-Wextra', '-Werror', '-I', path.join(ROOT, 'dist', 'connect', 'sdk'), '-o', lib, path.join(EXAMPLES, 'c-ticker-source', 'ticker_source.c')]);
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
    connectors: {
      'ticker.toml': `type = "source"\nkey = "ticker"\npath = "${lib}"\n[[topics]]\nname = "ticks"\n[plugin_config]\ncount = ${COUNT}\n[batch]\nmax_records = 100\n`,
      'jsonl.toml': `type = "sink"\nkey = "jsonl"\npath = "${path.join(EXAMPLES, 'js-jsonl-sink', 'jsonl-sink.js')}"\n[[topics]]\nnames = ["ticks"]\n[plugin_config]\npath = "{dir}/ticks.jsonl"\n`,
    },
  });
  const out = path.join(dir, 'ticks.jsonl');
  const rt = await startRuntime(dir);
  const lines = (): { key: string; value: string }[] => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; value: string }) : []);
  await waitFor(() => lines().length >= COUNT, `${COUNT} records in the sink's file`, 40000);
  const got = lines();
  expect(new Set(got.map((l) => (JSON.parse(l.value) as { n: number }).n)).size).toBe(COUNT);
  expect(got[7]).toMatchObject({ key: 'k7', value: '{"n":7}' });
  await rt.stop();
}, 55_000);
