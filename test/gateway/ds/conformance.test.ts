/**
 * The published Durable Streams conformance suite (@durable-streams/server-conformance-tests,
 * pinned in package.json) against a node started with `--protocol ds`, subscriptions included,
 * on both HTTP engines. The suite runs in vitest (its own runner); this test starts the node,
 * runs it, and fails unless every one of its tests passed. The suite's own counts are written to
 * `.ds-conformance/<engine>-node<major>[-gateway<N>].json`, which .ci/run prints (CI runs it on
 * Node 20, both engines, again with 2 gateway threads, and on the current LTS, where only
 * node:http serves: helpers/engines.ts).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENGINES } from '../../helpers/engines';
import { ROOT, startNode, tempDir } from '../../helpers/node-process';

/** Tests in the pinned suite (0.3.6), subscriptions included. */
const SUITE_TESTS = 338;

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTests: number;
  testResults: Array<{ assertionResults: Array<{ status: string; title: string; ancestorTitles: string[]; failureMessages: string[] }> }>;
}

function runSuite(baseUrl: string, outFile: string): Promise<{ code: number | null; output: string }> {
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const args = [vitest, 'run', '--config', 'test/ds-conformance/vitest.config.mjs', '--reporter=json', `--outputFile=${outFile}`];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, CONFORMANCE_TEST_URL: baseUrl, CONFORMANCE_LONG_POLL_MS: '500', CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

for (const engine of ENGINES) {
  describe(`the Durable Streams conformance suite on the ${engine} engine`, () => {
    test(`passes every one of its ${SUITE_TESTS} tests, subscriptions included`, async () => {
      // The suite's two long-poll timing tests need the server's timeout well under 4 s.
      const node = await startNode({ engine, args: ['--protocol', 'ds', '--long-poll-timeout', '500', '--no-admin'] });
      const outFile = path.join(tempDir('svc-ds-suite-'), 'report.json');
      const run = await runSuite(node.url, outFile);
      await node.stop();
      expect(fs.existsSync(outFile) ? '' : run.output).toBe('');
      const r = JSON.parse(fs.readFileSync(outFile, 'utf8')) as VitestReport;
      const failed = r.testResults.flatMap((f) => f.assertionResults.filter((a) => a.status !== 'passed').map((a) => `${[...a.ancestorTitles, a.title].join(' › ')}: ${(a.failureMessages[0] ?? a.status).split('\n')[0]}`));
      const summary = { engine, runtime: process.version, passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests, total: r.numTotalTests };
      fs.mkdirSync(path.join(ROOT, '.ds-conformance'), { recursive: true });
      // A run with gateway threads (SVC_GATEWAY_THREADS, .ci/run's third pass) is reported on its own.
      const threads = Number(process.env['SVC_GATEWAY_THREADS'] ?? '1');
      const name = `${engine}-node${process.versions.node.split('.')[0]}${threads > 1 ? `-gateway${threads}` : ''}.json`;
      fs.writeFileSync(path.join(ROOT, '.ds-conformance', name), JSON.stringify({ ...summary, requestedGatewayThreads: threads, gatewayThreads: threads > 1 && engine === 'uws' ? threads : 1 }) + '\n');
      expect(failed).toEqual([]);
      expect(summary).toEqual({ engine, runtime: process.version, passed: SUITE_TESTS, failed: 0, skipped: 0, total: SUITE_TESTS });
      expect(run.code).toBe(0);
    }, 600_000);
  });
}
