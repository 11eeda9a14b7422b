/**
 * `svc append`: one record from an argument, or records from stdin (one per line, NUL-separated
 * or length-prefixed), sent as JSON batches (docs/protocol.md, "Append"). Batches go one at a
 * time and in order, so the records keep the input's order in the stream; the next batch is
 * read while the previous one is in flight.
 *
 * Each run is an idempotent producer (docs/protocol.md, "Idempotent producers"): a random
 * producer id, epoch 0, one producer sequence per batch. A batch whose answer is lost (the
 * connection drops, the node restarts or answers 5xx) is sent again with the same sequence, and
 * the node writes it at most once — so a retry never duplicates records.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { type Command, Option } from 'commander';
import { send, streamPath } from '../http';
import { emit } from '../output';
import { CliError, EXIT, usageError } from '../errors';
import { type Registry } from '../program';
import { collect, headerPairs, nonNegative, positive, streamName } from '../args';
import { RecordSplitter, type Framing } from '../record-splitter';
import { Progress } from '../progress';
import { type Context } from '../context';

interface BatchRecord {
  body?: string;
  body_b64?: string;
  key?: string;
  headers?: Record<string, string>;
}

interface AppendResult {
  stream: string;
  records: number;
  firstSeq: number | null;
  nextSeq: number | null;
  sealed: boolean;
}

/** The node's limits are 10,000 records and 16 MiB per request (docs/protocol.md, "Limits"). */
const MAX_BATCH_RECORDS = 10_000;
const MAX_BATCH_BYTES = 15 * 1024 * 1024;

/**
 * `--key-sep`: a record `key<sep>body` is split at the first separator (kcat's `-K`); a record
 * without it keeps its whole text as the body and gets `--key` (or no key).
 */
function splitKey(record: Buffer, sep: Buffer | null, key: string | undefined): { body: Buffer; key: string | undefined } {
  if (sep === null) return { body: record, key };
  const at = record.indexOf(sep);
  if (at < 0) return { body: record, key };
  return { body: record.subarray(at + sep.length), key: record.subarray(0, at).toString('utf8') };
}

function toRecord(input: Buffer, fixedKey: string | undefined, headers: Record<string, string> | undefined, sep: Buffer | null = null): BatchRecord {
  const { body, key } = splitKey(input, sep, fixedKey);
  const r: BatchRecord = isUtf8(body) ? { body: body.toString('utf8') } : { body_b64: body.toString('base64') };
  if (key !== undefined) r.key = key;
  if (headers !== undefined) r.headers = headers;
  return r;
}

class Batcher {
  #records: BatchRecord[] = [];
  /** Estimated JSON size of the batch, against --batch-bytes. */
  #bytes = 0;
  /** Input bytes the batch came from (bodies and their framing), for the progress line. */
  #inputBytes = 0;
  #inFlight: Promise<void> = Promise.resolve();
  #producerSeq = 0;
  readonly #producerId = `svc-cli-${randomBytes(12).toString('hex')}`;
  readonly result: AppendResult;

  constructor(
    private readonly ctx: Context,
    stream: string,
    private readonly maxRecords: number,
    private readonly maxBytes: number,
    private readonly progress: Progress | null,
    private readonly retries: number,
  ) {
    this.result = { stream, records: 0, firstSeq: null, nextSeq: null, sealed: false };
  }

  /** Adds a record; when the batch is full, waits for the previous send and starts this one. */
  async add(r: BatchRecord, size: number, framing = 0): Promise<void> {
    this.#records.push(r);
    this.#bytes += size + 64;
    this.#inputBytes += size + framing;
    if (this.#records.length >= this.maxRecords || this.#bytes >= this.maxBytes) await this.flush(false);
  }

  async flush(seal: boolean): Promise<void> {
    const records = this.#records;
    const bytes = this.#inputBytes;
    this.#records = [];
    this.#bytes = 0;
    this.#inputBytes = 0;
    await this.#inFlight;
    if (records.length === 0 && !seal) return;
    const sending = this.#send(records, bytes, seal);
    sending.catch(() => undefined); // awaited by the next flush or drain, which reports it
    this.#inFlight = sending;
    if (seal) await this.#inFlight;
  }

  async #send(records: BatchRecord[], bytes: number, seal: boolean): Promise<void> {
    const headers: Record<string, string> = {};
    if (seal) headers['svc-closed'] = 'true';
    const body = records.length === 0 ? undefined : JSON.stringify({ records });
    if (body !== undefined) {
      headers['content-type'] = 'application/vnd.svc.batch+json';
      // A seal alone carries no records, so it takes no producer sequence (the node refuses one).
      headers['svc-producer-id'] = this.#producerId;
      headers['svc-producer-epoch'] = '0';
      headers['svc-producer-seq'] = String(this.#producerSeq++);
    }
    const res = await this.#sendWithRetries(headers, body);
    // A duplicate of an older batch may come without seqs; the ones known stay.
    if (res.headers.get('svc-start-seq') !== null) {
      const start = Number(res.headers.get('svc-start-seq'));
      if (this.result.firstSeq === null && records.length > 0) this.result.firstSeq = start;
      this.result.nextSeq = Number(res.headers.get('svc-next-seq'));
    }
    this.result.records += records.length;
    if (seal) this.result.sealed = true;
    this.progress?.add(records.length, bytes);
  }

  /** Sends one batch; an unreachable node or a 5xx is retried (backoff 0.2 s doubling). */
  async #sendWithRetries(headers: Record<string, string>, body: string | undefined): Promise<Response> {
    for (let attempt = 0, wait = 200; ; attempt++, wait = Math.min(wait * 2, 5000)) {
      try {
        return await send(this.ctx, 'protocol', streamPath(this.result.stream), { method: 'POST', headers, body });
      } catch (err) {
        const retriable = err instanceof CliError && ((err.exitCode === EXIT.failure && err.status === undefined) || err.exitCode === EXIT.server);
        if (!retriable || attempt >= this.retries) throw err;
        this.ctx.io.stderr(`svc: append to ${this.result.stream}: ${err.message}; retrying in ${wait} ms\n`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** Waits for the last batch in flight. */
  async drain(): Promise<void> {
    await this.#inFlight;
  }
}

function stdinSize(): number | null {
  try {
    const st = fs.fstatSync(0);
    return st.isFile() ? st.size : null;
  } catch {
    return null;
  }
}

export function registerAppend(program: Command, { action }: Registry): void {
  program
    .command('append')
    .description('append one record (argument) or many (stdin)')
    .argument('<stream>')
    .argument('[record]', 'the record body; without it (or "-") records are read from stdin')
    .option('-k, --key <key>', 'record key (every record)')
    .option('-K, --key-sep <sep>', 'each record is key<sep>body: the key ends at the first <sep> (a record without it: no key, or --key)')
    .option('-H, --header <key=value>', 'record header, repeatable (every record)', collect)
    .addOption(new Option('-d, --delimiter <framing>', 'stdin framing').choices(['line', 'nul', 'length']).default('line'))
    .option('-0', 'same as --delimiter nul')
    .option('--batch-records <n>', 'records per request', '1000')
    .option('--batch-bytes <n>', 'body bytes per request', String(1024 * 1024))
    .option('--seal', 'seal the stream after the last record')
    .option('--create', 'create the stream first when it does not exist (application/octet-stream)')
    .option('--no-progress', 'no progress line on a terminal')
    .option('--retries <n>', 'resend a batch whose answer was lost (node unreachable or 5xx) this many times', '5')
    .action(
      action(async (ctx, [name, arg], o) => {
        const stream = streamName(name);
        const key = o['key'] as string | undefined;
        const sep = o['keySep'] === undefined ? null : Buffer.from(String(o['keySep']), 'utf8');
        if (sep !== null && sep.length === 0) throw usageError('--key-sep needs at least one character');
        const headers = headerPairs(o['header']);
        const maxRecords = Math.min(positive(o['batchRecords'], '--batch-records'), MAX_BATCH_RECORDS);
        const maxBytes = Math.min(positive(o['batchBytes'], '--batch-bytes'), MAX_BATCH_BYTES);
        const fromStdin = arg === undefined || arg === '-';
        if (fromStdin && process.stdin.isTTY) throw usageError('give the record as an argument, or pipe records into stdin');
        const showProgress = fromStdin && o['progress'] !== false && ctx.io.stderrIsTty && ctx.output !== 'json';
        const progress = showProgress ? new Progress((s) => ctx.io.stderr(s), ctx.io.columns, stdinSize()) : null;
        if (o['create']) await send(ctx, 'protocol', streamPath(stream), { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
        const batcher = new Batcher(ctx, stream, maxRecords, maxBytes, progress, nonNegative(o['retries'], '--retries'));
        if (!fromStdin) {
          const body = Buffer.from(String(arg), 'utf8');
          await batcher.add(toRecord(body, key, headers, sep), body.length);
        } else {
          const framing: Framing = o['0'] ? 'nul' : (o['delimiter'] as Framing);
          const splitter = new RecordSplitter(framing);
          const overhead = framing === 'length' ? 4 : 1;
          for await (const chunk of process.stdin) {
            for (const body of splitter.push(chunk as Buffer)) await batcher.add(toRecord(body, key, headers, sep), body.length, overhead);
          }
          let last: Buffer | null;
          try {
            last = splitter.end();
          } catch (err) {
            throw usageError((err as Error).message);
          }
          if (last !== null) await batcher.add(toRecord(last, key, headers, sep), last.length);
        }
        await batcher.flush(o['seal'] === true);
        await batcher.drain();
        progress?.done();
        const r = batcher.result;
        emit(ctx, r, () =>
          r.records === 0
            ? `no records appended${r.sealed ? `; sealed ${stream}` : ''}\n`
            : `appended ${r.records} record${r.records === 1 ? '' : 's'} to ${stream} (seq ${r.firstSeq}..${r.nextSeq! - 1})${r.sealed ? ', sealed' : ''}\n`,
        );
      }),
    );
}
