/**
 * A JS plugin's worker thread: loads the module, creates one sink or source and runs the
 * runtime's requests one at a time. An uncaught exception, a heap over the worker's limit or
 * a call that never returns ends this thread only; the runtime sees the exit (or its own call
 * timeout, then terminate()) and fails the connector, which it respawns with backoff.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SinkPlugin, SinkRecord, SourcePlugin } from '../plugin-api';
import { importPluginModule } from './load-module';
import { asBuffer, type WorkerEnvelope, type WorkerInit, type WorkerMessage, type WorkerRequest } from './protocol';

const init = workerData as WorkerInit;
const port = parentPort!;
const send = (m: WorkerMessage): void => port.postMessage(m);

const plugin: Promise<SinkPlugin | SourcePlugin> = (async () => {
  const m = await importPluginModule(init.file);
  const create = init.type === 'sink' ? m.createSink : m.createSource;
  if (create === undefined) throw new Error(`plugin ${init.file} is not a ${init.type} (it exports no ${init.type === 'sink' ? 'createSink' : 'createSource'})`);
  return create();
})();
// A load failure is reported by the first call (open), not as an unhandled rejection. Either
// way the runtime is told the module was evaluated: its call timeouts start from here, so a
// slow module load (a large bundle, a cold disk) does not count against open().
plugin.then(
  () => send({ ready: true }),
  () => send({ ready: true }),
);

const ctx = { key: init.key, timeoutMs: init.timeoutMs, log: (level: 'error' | 'warn' | 'info' | 'debug', msg: string): void => send({ log: { level, msg: String(msg) } }) };

async function run(req: WorkerRequest): Promise<unknown> {
  const p = await plugin;
  switch (req.op) {
    case 'open':
      if (init.type === 'sink') await (p as SinkPlugin).open(ctx, req.config);
      else await (p as SourcePlugin).open(ctx, req.config, req.state === null ? null : asBuffer(req.state));
      return null;
    case 'write': {
      const records: SinkRecord[] = req.records.map((r) => ({ ...r, key: r.key === null ? null : asBuffer(r.key), value: asBuffer(r.value) }));
      return await (p as SinkPlugin).write(records);
    }
    case 'flush':
      await (p as SinkPlugin).flush();
      return null;
    case 'poll':
      return await (p as SourcePlugin).poll(req.max, req.timeoutMs);
    case 'commit':
      await (p as SourcePlugin).commit(req.ack);
      return null;
    case 'close':
      await p.close();
      return null;
  }
}

port.on('message', (m: WorkerEnvelope) => {
  const { call, ...req } = m;
  run(req).then(
    (value) => send({ call, ok: true, value }),
    (err: unknown) => send({ call, ok: false, message: err instanceof Error ? err.message : String(err) }),
  );
});
