/** The shape of one API's implementation (`apis/<api>.ts`); dispatch.ts holds the table. */
import { type KafkaApi } from './messages';
import { type Reader } from './protocol/reader';
import { type Writer } from './protocol/writer';
import { type ConnectionInfo, type KafkaContext } from './context';

export interface ApiHandler<Req, Res> {
  readonly api: KafkaApi;
  decode(r: Reader, version: number): Req;
  encode(w: Writer, res: Res, version: number): void;
  /**
   * The response, or null when the protocol sends none (Produce with acks=0), or `Later`: the
   * request's effects are ordered (e.g. its appends were handed to the shards) and the connection
   * may run its next request while this one's response is still on its way.
   */
  handle(ctx: KafkaContext, req: Req, version: number, conn: ConnectionInfo): Promise<Res | null | Later<Res>>;
}

/** A response that comes after the next requests of the connection have started (responses still go out in request order). */
export class Later<Res> {
  constructor(readonly response: Promise<Res>) {}
}

/** Type-erased, for the dispatch table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApiHandler = ApiHandler<any, any>;
