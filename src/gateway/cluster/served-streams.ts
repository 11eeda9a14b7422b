/**
 * In a cluster, the streams a gateway thread serves itself (docs/config.md, `--gateway-threads`):
 * those placed on this node, as the main thread's placement view says (served-watch.ts sends the
 * changes). A request for any other stream, and every create and delete (they write placement
 * rows), goes to the main thread, whose owner check answers it (307, waiting for an open, 503).
 *
 *   main thread: row of S now placed here ──▶ {add: [S]}
 *                row of S names another node, or is gone ──▶ {gone: [[S, where to]]} (acknowledged
 *                before the local copy of S is dropped)
 *
 * A request served here while its stream moves away gets what it would have got on the main
 * thread: an append the old owner's fence refuses (503 `moved`), or a read the dropped copy
 * answers 404, is answered 307 to the new owner when the thread has heard of the move. The
 * thread has heard of it by then: the drop waits for its acknowledgement.
 */
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { withSend } from '../http/forwarding-response';
import { type OwnedListener, isMovedReply, redirectTo } from './owner-check';

/** Where a stream no longer placed here went: its new owner's listener of this kind. */
export interface MovedTo {
  host: string;
  nodeId: number;
}

/** Main thread → gateway thread: what changed in the streams placed on this node. */
export interface ServedChange {
  /** The first message: `add` is every stream placed here (the thread served none before). */
  reset?: true;
  add: string[];
  /** No longer placed here; where each went, or null (deleted, or an owner that is down or runs no such listener). */
  gone: Array<[name: string, to: MovedTo | null]>;
}

/**
 * Moves remembered for the requests in flight when they happened (only those need them: later
 * requests for the stream go to the main thread). The oldest are forgotten first.
 */
const REMEMBERED_MOVES = 4_096;

/** A gateway thread's copy of the streams placed on this node. */
export class ServedStreams {
  readonly #served = new Set<string>();
  readonly #moved = new Map<string, MovedTo>();

  apply(c: ServedChange): void {
    if (c.reset === true) this.#served.clear();
    for (const name of c.add) {
      this.#served.add(name);
      this.#moved.delete(name);
    }
    for (const [name, to] of c.gone) {
      this.#served.delete(name);
      this.#moved.delete(name);
      if (to === null) continue;
      this.#moved.set(name, to);
      if (this.#moved.size > REMEMBERED_MOVES) this.#moved.delete(this.#moved.keys().next().value as string);
    }
  }

  has(name: string): boolean {
    return this.#served.has(name);
  }

  /** Where `name` went, when it moved away since it was served here (a stream placed here again is forgotten by `apply`). */
  movedTo(name: string): MovedTo | null {
    return this.#moved.get(name) ?? null;
  }
}

/**
 * Wraps a gateway thread's handler in a cluster: a stream served here that moved away while the
 * request ran (`moved`, or 404 from its dropped copy) answers 307 to the new owner instead.
 * `nameOf`: the stream the request is about ('' for none).
 */
export function servedHere(listener: OwnedListener, streams: ServedStreams, nameOf: (req: HttpRequest) => string, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> =>
    handler(
      req,
      withSend(res, (target, status, headers, body, bodyDone) => {
        const to = status === 404 || isMovedReply(listener, status, body) ? streams.movedTo(nameOf(req)) : null;
        // A redirect sends another body: this one is never read, so it is dropped (never reused).
        if (to !== null) return redirectTo(listener, req, target, to.host, to.nodeId);
        target.send(status, headers, body, bodyDone);
      }),
    );
}
