/** The shape of one API's implementation (`apis/<api>.ts`); dispatch.ts holds the table. */
import { type KafkaApi } from './messages';
import { type Reader } from './protocol/reader';
import { type Writer } from './protocol/writer';
import { type ConnectionInfo, type KafkaContext } from './context';

export interface ApiHandler<Req, Res> {
  readonly api: KafkaApi;
  decode(r: Reader, version: number): Req;
  encode(w: Writer, res: Res, version: number): void;
  /** The response, or null when the protocol sends none (Produce with acks=0). */
  handle(ctx: KafkaContext, req: Req, version: number, conn: ConnectionInfo): Promise<Res | null>;
}

/** Type-erased, for the dispatch table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApiHandler = ApiHandler<any, any>;
