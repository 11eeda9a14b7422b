/**
 * A routine node restart under a running source and sink: with the node stopped for ten
 * seconds both report `degraded` (API and /metrics) and retry on their own; once the node is
 * back both resume without an operator, every record arrives, duplicates bounded by one batch.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../helpers/free-ports';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const seqs = (f: string): number[] => {
  if (!fs.existsSync(f)) return [];
  const text = fs.readFileSync(f, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);
};

const status = async (url: string): Promise<string> => ((await (await fetch(url)).json()) as { status: string }).status;

test('node stopped 10 s and restarted: source and sink go degraded, then resume by themselves; every record delivered, duplicates within one batch', async () => {
  const TOTAL = 8000;
  const BATCH = 200;
  const port = await freePort();
  const args = ['--no-admin', '--shards', '1', '--shard-workers', '1', '--kafka-listen', `127.0.0.1:${port}`];
  let node: NodeProcess = await startNode({ args });
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "127.0.0.1:${port}"\n[kafka.properties]\nretries = 2\nconnection_timeout_ms = 500\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`,
    connectors: {
      'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "restart-flow"\n[plugin_config]\nrate = 2000\ncount = ${TOTAL}\n[batch]\nmax_records = ${BATCH}\n[error]\nmax_backoff = "1s"\n`,
      'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["restart-flow"]\n[plugin_config]\npath = "{dir}/out.jsonl"\n[batch]\nmax_records = ${BATCH}\n`,
    },
  });
  const out = path.join(dir, 'out.jsonl');
  const rt = await startRuntime(dir);
  await waitFor(() => seqs(out).length > 1000, 'some records in the sink', 30000);

  await node.stop();
  const seen = { source: false, sink: false, metric: false };
  const downUntil = Date.now() + 10_000;
  while (Date.now() < downUntil) {
    seen.source ||= (await status(`${rt.url}/sources/gen`)) === 'degraded';
    seen.sink ||= (await status(`${rt.url}/sinks/out`)) === 'degraded';
    seen.metric ||= (await (await fetch(`${rt.url}/metrics`)).text()).includes('svc_connector_status{connector_key="out",connector_type="sink",status="degraded"} 1');
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(seen).toEqual({ source: true, sink: true, metric: true });
  expect(seqs(out).length).toBeLessThan(TOTAL);

  node = await startNode({ dataDir: node.dataDir, args });
  await waitFor(() => new Set(seqs(out)).size >= TOTAL, 'every record in the sink after the node came back', 40000);
  await waitFor(async () => (await status(`${rt.url}/sources/gen`)) === 'running' && (await status(`${rt.url}/sinks/out`)) === 'running', 'both running again', 20000);
  const got = seqs(out);
  const unique = new Set(got);
  for (let i = 0; i < TOTAL; i++) if (!unique.has(i)) throw new Error(`seq ${i} lost`);
  expect(got.length - TOTAL).toBeLessThanOrEqual(BATCH);
  await rt.stop();
  await node.stop();
}, 90_000);
