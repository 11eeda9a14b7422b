/** A complete answer to a request, as every HTTP listener's handlers return it and write it. */
import { type HeaderList } from '../http/engine';

export interface Reply {
  status: number;
  headers: HeaderList;
  body?: string | Buffer;
}
