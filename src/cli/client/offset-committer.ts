/**
 * The client side of named offsets (`svc tail --group`, docs/protocol.md "Named offsets"):
 * loads the group's committed position of a stream, and commits the seq after the last record
 * printed.
 *
 * The commit point: a record counts as delivered once its bytes were handed to stdout (written,
 * and stdout drained when it asked for it); only then is the seq after it committed. So the
 * boundary is at-least-once: a run killed between printing and the commit's answer prints those
 * records again on the next run (at most the records printed while one commit was in flight);
 * a record is never skipped. Commits are coalesced: one request in flight per stream, each
 * carrying the latest position, so a fast stream costs one commit per round trip, not per record.
 */
import { send, sendJson, streamPath } from './http';
import { type Context } from './context';

interface OffsetDoc {
  seq: number | null;
}

export class OffsetCommitter {
  #latest: number | null = null;
  #committed: number | null = null;
  #running: Promise<void> | null = null;
  #failure: Error | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly stream: string,
    private readonly group: string,
  ) {}

  #path(): string {
    return `/_offsets${streamPath(this.stream)}?${new URLSearchParams({ group: this.group })}`;
  }

  /** The committed position (the next seq to read), or null when the group has none for the stream. */
  async load(): Promise<number | null> {
    const doc = await sendJson<OffsetDoc>(this.ctx, 'protocol', this.#path());
    this.#committed = doc.seq;
    return doc.seq;
  }

  /** Records `seq` as delivered (everything below it was printed) and commits it soon. */
  advance(seq: number): void {
    this.#latest = seq;
    this.#running ??= this.#run();
  }

  async #run(): Promise<void> {
    try {
      while (this.#latest !== null && this.#latest !== this.#committed) {
        const seq = this.#latest;
        try {
          await send(this.ctx, 'protocol', this.#path(), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seq }) });
          this.#committed = seq;
          this.#failure = null;
        } catch (err) {
          // Reported once; the next record (or the final flush) tries again.
          if (this.#failure === null) this.ctx.io.stderr(`svc: tail of ${this.stream}: commit of seq ${seq} for group ${this.group} failed: ${(err as Error).message}\n`);
          this.#failure = err as Error;
          return;
        }
      }
    } finally {
      this.#running = null;
    }
  }

  /** Waits until the latest position is committed; throws when the last attempt failed. */
  async flush(): Promise<void> {
    await this.#running;
    if (this.#latest !== null && this.#latest !== this.#committed) {
      await this.#run();
      if (this.#failure !== null) throw this.#failure;
    }
  }
}
