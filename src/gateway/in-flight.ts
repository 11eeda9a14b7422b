import { type HttpRequest, type HttpResponse } from './http/engine';
import { isInternal } from './shield';

/** Counts requests being handled so a graceful shutdown can wait for them. */
export class InFlight {
  #count = 0;
  #closing = false;
  #waiters: Array<() => void> = [];

  get closing(): boolean {
    return this.#closing;
  }

  begin(): void {
    this.#count++;
  }

  end(): void {
    this.#count--;
    if (this.#count === 0 && this.#closing) for (const w of this.#waiters.splice(0)) w();
  }

  /**
   * One request from `begin()` until its answer is written: `routeOf(ctx, req, res)` runs at once (a
   * throw counts as its rejection, so routers need not be `async`, one promise less per request),
   * `reply` gets what it resolved to, `refuse` a rejection that is an expected error; a bug or an
   * `internal` error (`isInternal`) is rethrown, so the shield around the listener answers it with a
   * request id. One reaction, not a `.finally` as well, and module functions given the request and
   * response rather than closures made per request: every layer here stays alive as long as an idle
   * live reader waits.
   */
  answer<C, T>(
    routeOf: (ctx: C, req: HttpRequest, res: HttpResponse) => Promise<T>,
    ctx: C,
    req: HttpRequest,
    res: HttpResponse,
    reply: (res: HttpResponse, req: HttpRequest, r: T) => void,
    refuse: (res: HttpResponse, req: HttpRequest, err: unknown) => void,
  ): Promise<void> {
    let routed: Promise<T>;
    try {
      routed = routeOf(ctx, req, res);
    } catch (err) {
      routed = Promise.reject(err);
    }
    return routed.then(
      (r) => {
        try {
          reply(res, req, r);
        } finally {
          this.end();
        }
      },
      (err: unknown) => {
        try {
          if (isInternal(err)) throw err;
          refuse(res, req, err);
        } finally {
          this.end();
        }
      },
    );
  }

  /** Refuse new requests from now on; resolves when the ones in flight are done. */
  drain(): Promise<void> {
    this.#closing = true;
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
