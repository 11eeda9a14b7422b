/**
 * `svc bench append|read`: a load generator in the spirit of kafka-producer-perf-test.
 * `--connections` keep-alive connections each run one request at a time (closed loop, as wrk
 * does); `--rate` caps the total requests per second. Prints throughput and latency
 * percentiles. Requests go through bench-connection.ts (prepared bytes, a minimal response
 * parser) so the client costs little CPU beside the node; it does not follow redirects — point
 * it at the stream's owner.
 */
import { type Command } from 'commander';
import { send, streamPath } from '../http';
import { emit, fields } from '../output';
import { type Registry } from '../program';
import { nonNegative, positive, streamName } from '../args';
import { type Context } from '../context';
import { CliError, EXIT } from '../errors';
import { bytesText } from '../progress';
import { BenchConnection } from '../bench-connection';

interface BenchResult {
  workload: 'append' | 'read';
  stream: string;
  connections: number;
  seconds: number;
  requests: number;
  /** Records moved by the successful requests. */
  records: number;
  errors: number;
  /** The failed requests by cause: an HTTP status ("307", "503") or "connection" (no answer). */
  errorsBy: Record<string, number>;
  requestsPerSec: number;
  recordsPerSec: number;
  bytesPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Workload {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Records and bytes one successful request moved, from its answer's body size. */
  counts(bytes: number): { records: number; bytes: number };
}

async function run(ctx: Context, target: string, w: Workload, connections: number, seconds: number, rate: number): Promise<Omit<BenchResult, 'workload' | 'stream'>> {
  const base = new URL(target);
  if (base.protocol !== 'http:') throw new CliError('svc bench speaks plain http only (put it beside the node, not behind TLS)', EXIT.usage);
  const token = ctx.token();
  const lines = [`${w.method} ${w.path} HTTP/1.1`, `host: ${base.host}`];
  for (const [k, v] of Object.entries(w.headers)) lines.push(`${k}: ${v}`);
  if (token !== null) lines.push(`authorization: Bearer ${token}`);
  lines.push(`content-length: ${w.body?.length ?? 0}`);
  const request = Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), w.body ?? Buffer.alloc(0)]);
  const port = Number(base.port || 80);
  const latencies: number[] = [];
  let requests = 0;
  let errors = 0;
  const errorsBy: Record<string, number> = {};
  const failed = (cause: string) => {
    errors++;
    errorsBy[cause] = (errorsBy[cause] ?? 0) + 1;
  };
  let records = 0;
  let bytes = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const interval = rate > 0 ? 1000 / rate : 0;
  let nextSlot = start;
  const conns: BenchConnection[] = [];
  const loopWith = (conn: BenchConnection) => async () => {
    while (performance.now() < end) {
      if (interval > 0) {
        const slot = nextSlot;
        nextSlot += interval;
        const wait = slot - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (performance.now() >= end) break;
      }
      const t0 = performance.now();
      try {
        const a = await conn.send(request);
        if (a.status === 200) {
          latencies.push(performance.now() - t0);
          const c = w.counts(a.bytes);
          records += c.records;
          bytes += c.bytes;
          requests++;
        } else failed(String(a.status));
      } catch {
        failed('connection');
        await new Promise((r) => setTimeout(r, 10)); // reconnects on the next send
      }
    }
  };
  await Promise.all(
    Array.from({ length: connections }, () => {
      const conn = new BenchConnection(base.hostname, port);
      conns.push(conn);
      return loopWith(conn)();
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  for (const c of conns) c.close();
  const sorted = Float64Array.from(latencies).sort();
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return {
    connections,
    seconds: r2(elapsed),
    requests,
    records,
    errors,
    errorsBy,
    requestsPerSec: Math.round(requests / elapsed),
    recordsPerSec: Math.round(records / elapsed),
    bytesPerSec: Math.round(bytes / elapsed),
    latencyMs: { p50: r2(percentile(sorted, 50)), p90: r2(percentile(sorted, 90)), p99: r2(percentile(sorted, 99)), p999: r2(percentile(sorted, 99.9)), max: r2(sorted[sorted.length - 1] ?? 0) },
  };
}

const CAUSES: Record<string, string> = { '307': 'redirects: another node owns the stream', '308': 'redirects', '401': 'unauthorized', '403': 'forbidden', '404': 'not found', '409': 'conflict', '429': 'too many requests', '503': 'unavailable', connection: 'no answer' };

/** "570 × 307 (redirects: another node owns the stream)". */
function errorText(by: Record<string, number>): string {
  return Object.entries(by)
    .map(([cause, n]) => `${n} × ${cause}${CAUSES[cause] !== undefined ? ` (${CAUSES[cause]})` : ''}`)
    .join(', ');
}

function report(ctx: Context, r: BenchResult): void {
  emit(ctx, r, () =>
    fields({
      workload: r.workload,
      stream: r.stream,
      connections: r.connections,
      duration: `${r.seconds} s`,
      requests: `${r.requests} (${r.errors} errors${r.errors === 0 ? '' : `: ${errorText(r.errorsBy)}`})`,
      rate: `${r.requestsPerSec} req/s, ${r.recordsPerSec} records/s, ${bytesText(r.bytesPerSec)}/s`,
      latency: `p50 ${r.latencyMs.p50} ms, p90 ${r.latencyMs.p90} ms, p99 ${r.latencyMs.p99} ms, p99.9 ${r.latencyMs.p999} ms, max ${r.latencyMs.max} ms`,
    }),
  );
}

const common = (c: Command) =>
  c
    .option('--stream <name>', 'stream to use (default: a new /bench/<time> stream, deleted afterwards)')
    .option('-c, --connections <n>', 'concurrent connections', '16')
    .option('--duration <seconds>', 'how long to run', '10')
    .option('--rate <n>', 'most requests per second in total (0: as fast as possible)', '0');

/**
 * The stream to load, created if needed, and the node that owns it: the create follows 307s
 * like every command, and its last hop is the owner, which the load then goes to directly (the
 * load itself follows no redirect: each would be a second request in the measurement).
 */
async function benchStream(ctx: Context, o: Record<string, unknown>): Promise<{ stream: string; temporary: boolean; target: string }> {
  const stream = o['stream'] !== undefined ? streamName(o['stream']) : `/bench/${Date.now()}-${process.pid}`;
  const res = await send(ctx, 'protocol', streamPath(stream), { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  const owner = res.url === '' ? ctx.url : new URL(res.url).origin;
  if (owner !== new URL(ctx.url).origin) ctx.io.stderr(`svc: bench: ${stream} is owned by ${owner}: loading that node\n`);
  return { stream, temporary: o['stream'] === undefined, target: owner };
}

export function registerBench(program: Command, { action }: Registry): void {
  const bench = program.command('bench').description('load test: append or read throughput and latency');
  common(bench.command('append').description('append records as fast as the node takes them (or at --rate)'))
    .option('--record-size <bytes>', 'bytes per record', '100')
    .option('--batch <n>', 'records per request (more than 1: a JSON batch)', '1')
    .action(
      action(async (ctx, _args, o) => {
        const { stream, temporary, target } = await benchStream(ctx, o);
        const size = nonNegative(o['recordSize'], '--record-size');
        const batch = positive(o['batch'], '--batch');
        const w: Workload =
          batch === 1
            ? { method: 'POST', path: streamPath(stream), headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, 'x'), counts: () => ({ records: 1, bytes: size }) }
            : {
                method: 'POST',
                path: streamPath(stream),
                headers: { 'content-type': 'application/vnd.svc.batch+json' },
                body: Buffer.from(JSON.stringify({ records: Array.from({ length: batch }, () => ({ body: 'x'.repeat(size) })) })),
                counts: () => ({ records: batch, bytes: batch * size }),
              };
        const r = await run(ctx, target, w, positive(o['connections'], '--connections'), positive(o['duration'], '--duration'), nonNegative(o['rate'], '--rate'));
        if (temporary) await send(ctx, 'protocol', streamPath(stream), { method: 'DELETE' });
        report(ctx, { workload: 'append', stream, ...r });
        if (r.requests === 0) throw new CliError('no request succeeded', EXIT.failure);
      }),
    );
  common(bench.command('read').description('read the same page over and over (fills the stream first)'))
    .option('--record-size <bytes>', 'bytes per record when filling', '100')
    .option('--count <n>', 'records per read', '100')
    .action(
      action(async (ctx, _args, o) => {
        const { stream, temporary, target } = await benchStream(ctx, o);
        const size = nonNegative(o['recordSize'], '--record-size');
        const count = positive(o['count'], '--count');
        const records = Array.from({ length: count }, () => ({ body: 'x'.repeat(size) }));
        await send(ctx, 'protocol', streamPath(stream), { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) });
        const w: Workload = {
          method: 'GET',
          path: `${streamPath(stream)}?seq=0&count=${count}&format=raw`,
          headers: {},
          body: null,
          counts: (bytes) => ({ records: count, bytes }),
        };
        const r = await run(ctx, target, w, positive(o['connections'], '--connections'), positive(o['duration'], '--duration'), nonNegative(o['rate'], '--rate'));
        if (temporary) await send(ctx, 'protocol', streamPath(stream), { method: 'DELETE' });
        report(ctx, { workload: 'read', stream, ...r });
        if (r.requests === 0) throw new CliError('no request succeeded', EXIT.failure);
      }),
    );
}
