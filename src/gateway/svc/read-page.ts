/** Headers of a read page: catch-up reads and long-poll answers share them (docs/protocol.md, "Read"). */
import { type ReadResult } from '../../shards';
import { BINARY_BATCH_TYPE } from './context';
import { encodeCursor } from './cursor';

export function pageHeaders(r: ReadResult, format: string): Array<[string, string]> {
  const headers: Array<[string, string]> = [
    ['content-type', format === 'json' ? 'application/json' : format === 'binary' ? BINARY_BATCH_TYPE : r.contentType],
    ['svc-next-seq', String(r.nextSeq)],
    ['svc-start-seq', String(r.startSeq)],
  ];
  if (r.upToDate) headers.push(['svc-up-to-date', 'true']);
  else headers.push(['svc-cursor', encodeCursor(r.streamId, r.nextSeq)]);
  if (r.closed) headers.push(['svc-closed', 'true']);
  return headers;
}
