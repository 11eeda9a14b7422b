/**
 * The main thread's side of the Kafka connections served by gateway threads (thread-front.ts):
 * runs the requests a thread leaves to it (everything but a Produce the thread can serve: group,
 * transaction and admin APIs, Metadata, Fetch, SASL) with the listener's own dispatch, as if the
 * connection were its own, and answers with the response frame. Per connection it keeps what
 * dispatch keeps for one of its sockets (the client id, the auth state: auth.ts keys it by the
 * connection object) until the thread says the connection closed.
 *
 *   gateway thread ── kafka-req {rid, conn, frame} ──▶ relay ──▶ dispatch(ctx, frame, proxy of conn)
 *                  ◀── kafka-res {rid, frame | pending | refused, access, clientId}
 *                  ◀── kafka-late {rid, frame | refused}        (after a pending one: Produce acks≠0)
 */
import { accessOf } from './auth';
import { type KafkaConnection, PendingResponse, type RefusalSink, type ResponseFrame } from './server';
import { type KafkaToMain, type KafkaToThread, type RelayedAccess, type RelayedAnswer } from './thread-messages';

/** Where a relayed request's answers go: the thread's control channel (each frame's buffer moved, not copied). */
export type RelayReply = (m: KafkaToThread, transfer: ArrayBuffer[]) => void;

type Run = (frame: Buffer, conn: KafkaConnection) => Promise<ResponseFrame | null | PendingResponse>;

export class KafkaRelay {
  readonly #run: Run;
  readonly #auth: boolean;
  readonly #refusals: RefusalSink;
  /** The connections of the gateway threads, by id (ids are unique in the node: the listener numbers every accepted socket). */
  readonly #conns = new Map<number, KafkaConnection>();

  /** `refusals`: the listener's refusal log, which the threads' refusals share (one rate limit per node). */
  constructor(run: Run, auth: boolean, refusals: RefusalSink) {
    this.#run = run;
    this.#auth = auth;
    this.#refusals = refusals;
  }

  /** A message of a gateway thread's Kafka front. */
  onMessage(m: KafkaToMain, reply: RelayReply): void {
    if (m.t === 'kafka-taken') return; // the threads' side keeps it (gateway-threads.ts)
    if (m.t === 'kafka-closed') {
      this.#conns.delete(m.conn);
      return;
    }
    if (m.t === 'kafka-refused') return this.#refusals(m.report);
    let conn = this.#conns.get(m.conn);
    if (conn === undefined) {
      conn = { id: m.conn, remote: m.remote, clientId: m.clientId };
      this.#conns.set(m.conn, conn);
    }
    const c = conn;
    const frame = Buffer.from(m.frame.buffer, m.frame.byteOffset, m.frame.byteLength);
    void this.#run(frame, c).then(
      (out) => {
        if (out instanceof PendingResponse) {
          this.#answer(reply, m.rid, { kind: 'pending' }, c);
          void out.frame.then(
            (late) => this.#late(reply, m.rid, toAnswer(late)),
            (err: unknown) => this.#late(reply, m.rid, refused(err)),
          );
          return;
        }
        this.#answer(reply, m.rid, toAnswer(out), c);
      },
      (err: unknown) => this.#answer(reply, m.rid, refused(err), c),
    );
  }

  /** Connections of gateway threads the relay keeps state for. */
  get size(): number {
    return this.#conns.size;
  }

  #answer(reply: RelayReply, rid: number, answer: RelayedAnswer, conn: KafkaConnection): void {
    const a = this.#auth ? accessOf(conn, true) : null;
    const access: RelayedAccess | null = a === null ? null : { scope: a.scope, token: a.token, mechanism: a.mechanism, rawTokenNext: a.rawTokenNext };
    reply({ t: 'kafka-res', rid, answer, access, clientId: conn.clientId }, transferOf(answer));
  }

  #late(reply: RelayReply, rid: number, answer: Exclude<RelayedAnswer, { kind: 'pending' }>): void {
    reply({ t: 'kafka-late', rid, answer }, transferOf(answer));
  }
}

/** A response frame as one buffer of its own (moved to the thread, not copied). */
function toAnswer(out: ResponseFrame | null): { kind: 'frame'; frame: Uint8Array | null } {
  if (out === null) return { kind: 'frame', frame: null };
  const parts = Buffer.isBuffer(out) ? [out] : out;
  const frame = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) {
    frame.set(b, at);
    at += b.length;
  }
  return { kind: 'frame', frame };
}

function refused(err: unknown): { kind: 'refused'; error: string; errorName: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: 'refused', error: e.message, errorName: e.name };
}

function transferOf(a: RelayedAnswer): ArrayBuffer[] {
  return a.kind === 'frame' && a.frame !== null ? [a.frame.buffer as ArrayBuffer] : [];
}
