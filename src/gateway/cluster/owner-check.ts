/**
 * The owner check of the Svc and Durable Streams listeners in a cluster (docs/cluster.md,
 * "Redirects"; spec: "A request for a stream owned by another node gets status 307 with the
 * owner's address in the Location header"). It wraps a listener's handler, inside the auth guard:
 *
 *   request ──▶ stream name of the path? ──no──▶ handler (list, schemas, subscriptions)
 *                 │ yes
 *                 ▼
 *               placement row (view) ──▶ this node ──▶ handler (+ row placed after a create, freed after a delete)
 *                                    │      moving here (opening, from): wait ≤ 5 s until it is placed, then again
 *                                    │      (still opening: 503, or the open's data_corrupt when damage stops it)
 *                                    │      the stream moved while the request ran (503, e.g. the `moved` outcome
 *                                    │      of a fenced append): 307 to the new owner instead
 *                                    ──▶ another live node ──▶ 307, Location = its advertised address + same path and query
 *                                    ──▶ a node without a live lease ──▶ 503 storage_unavailable
 *               no row in the view, and the store does not answer the lookup or placement within
 *               REQUEST_METADATA_MS (no etcd quorum) ──▶ 503 storage_unavailable, Retry-After
 *
 * Only installed with `--metadata etcd://…`: a single node's requests never pass here.
 */
import { type NodeRecord, type Owner, type Placement, isMoving } from '../../actors';
import { SvcError } from '../../errors';
import { type Logger } from '../../log';
import { COMMON_HEADERS } from '../ds/ds-headers';
import { toDsError } from '../ds/ds-errors';
import { STREAM_BASE } from '../ds/context';
import { type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, type ResponseBody, isParts, wholeBody } from '../http/engine';
import { withSend } from '../http/forwarding-response';
import { isInternal } from '../shield';
import { STREAMS_PATH } from '../svc/config-handlers';
import { OFFSETS_PATH } from '../svc/offset-handlers';
import { SHARE_PATH } from '../svc/share-handlers';
import { parseStreamName, toHttpError } from '../kit';

export type OwnedListener = 'svc' | 'ds';

/** How long a request for a stream being opened here waits for it (design: "up to 5 s"). */
const OPENING_WAIT_MS = 5_000;

export interface OwnerCheckDeps {
  placement: Placement;
  /**
   * Objects mode, while the node starts: resolves once its local streams were reopened at a new
   * epoch (docs/cluster.md, "Restart"); null after. A stale local copy is never served meanwhile.
   */
  starting?: () => Promise<void> | null;
  maxStreamNameBytes: number;
  log: Logger;
  /** Objects mode: why a stream moving here cannot be opened (damage in the object store: `data_corrupt`), else null. */
  openFailure?: (name: string) => SvcError | null;
}

/** The stream a request is about, or null (not a stream path, or a malformed name the handler answers). */
function streamOf(listener: OwnedListener, req: HttpRequest, maxBytes: number): { name: string; create: boolean; configPatch: boolean } | null {
  let raw: string;
  let config = false;
  if (listener === 'ds') {
    if (!req.path.startsWith(STREAM_BASE + '/') || req.path.startsWith(`${STREAM_BASE}/__ds/`)) return null;
    raw = req.path.slice(STREAM_BASE.length);
  } else if (req.path.startsWith(STREAMS_PATH + '/') || req.path.startsWith(OFFSETS_PATH + '/') || req.path.startsWith(SHARE_PATH + '/')) {
    // A share group's state of a stream has one writer, the stream's owner (docs/protocol.md, "Share groups").
    raw = req.path.slice(req.path.indexOf('/', 1));
    config = true;
  } else {
    if (req.path === '/' || req.path.startsWith('/_')) return null;
    raw = req.path;
  }
  try {
    return { name: parseStreamName(raw, maxBytes), create: req.method === 'PUT' && !config, configPatch: req.method === 'PATCH' && req.path.startsWith(STREAMS_PATH + '/') };
  } catch {
    return null;
  }
}

export function ownerCheck(listener: OwnedListener, d: OwnerCheckDeps, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    const s = streamOf(listener, req, d.maxStreamNameBytes);
    if (s === null) return handler(req, res);
    const dispatch = (owner: Owner, waited = false): void | Promise<unknown> => {
      switch (owner.kind) {
        case 'local': {
          const starting = owner.row === null ? null : (d.starting?.() ?? null);
          if (starting !== null) return starting.then(() => dispatch(d.placement.ownerNow(s.name) ?? { kind: 'local', row: null, version: null }, waited));
          if (owner.row !== null && isMoving(owner.row)) {
            if (waited) return fail(listener, req, res, d.openFailure?.(s.name) ?? new SvcError('storage_unavailable', `stream ${s.name} is being opened on this node; try again`));
            return d.placement.waitSettled(s.name, OPENING_WAIT_MS).then(() => dispatch(d.placement.ownerNow(s.name) ?? { kind: 'local', row: null, version: null }, true));
          }
          const after = s.configPatch ? configChanged(res, s.name, d) : afterwards(listener, req, res, s.name, s.create, d);
          return handler(req, movedAway(listener, req, owner.row === null ? res : after, s.name, d));
        }
        case 'remote':
          return redirect(listener, req, res, s.name, owner);
        case 'down':
          return fail(listener, req, res, new SvcError('storage_unavailable', `stream ${s.name} is owned by node ${owner.nodeId}, which is down; its streams are unavailable until it is back`, { owner_node_id: owner.nodeId }));
      }
    };
    const now = d.placement.ownerNow(s.name);
    if (now !== null) return dispatch(now);
    // The lookup or placement needs the metadata store; without it (no etcd quorum) it rejects
    // with storage_unavailable within the request deadline: a retriable 503, not the shield's 500.
    return d.placement.owner(s.name, s.create).then(dispatch, (err: unknown) => {
      if (isInternal(err)) throw err;
      fail(listener, req, res, err as SvcError);
    });
  };
}

/** After the handler's answer: a created stream's row is marked placed; a deleted stream's row is freed. */
function afterwards(listener: OwnedListener, req: HttpRequest, res: HttpResponse, name: string, create: boolean, d: OwnerCheckDeps): HttpResponse {
  const del = req.method === 'DELETE';
  if (!create && !del) return res;
  const done = (status: number): void => {
    // A stream created with an explicit Kafka topic (Svc-Kafka-Topic) is that topic's partition in the cluster's topic index.
    const kafkaTopic = listener === 'svc' ? (req.headers['svc-kafka-topic'] ?? null) : null;
    const work = create ? (status < 300 ? d.placement.markPlaced(name, kafkaTopic) : status >= 400 ? d.placement.releaseOpening(name) : null) : status === 204 ? d.placement.release(name) : null;
    work?.catch((err: unknown) => d.log.warn({ stream: name, err: (err as Error).message, listener }, 'updating the placement row failed'));
  };
  return withSend(res, (target, status, headers, body, bodyDone) => {
    target.send(status, headers, body, bodyDone);
    done(status);
  });
}

/**
 * After a stream config PATCH on the owner: its Kafka topic goes into the placement row before the
 * answer, so every node's topic index has it for the client's next request (docs/cluster.md,
 * "Schemas and topic configs"). A failed row write is logged; the stream's own config has changed.
 */
function configChanged(res: HttpResponse, name: string, d: OwnerCheckDeps): HttpResponse {
  return withSend(res, (target, status, headers, body, bodyDone) => {
    let topic: string | null | undefined;
    if (status === 200) {
      try {
        const whole = wholeBody(body) ?? '';
        const doc = JSON.parse(typeof whole === 'string' ? whole : Buffer.from(whole).toString('utf8')) as { kafkaTopic?: string; kafkaTopicDerived?: boolean };
        topic = doc.kafkaTopicDerived === true ? null : doc.kafkaTopic;
      } catch {
        topic = undefined;
      }
    }
    if (topic === undefined) return target.send(status, headers, body, bodyDone);
    void d.placement
      .setKafkaTopic(name, topic)
      .catch((err: unknown) => d.log.warn({ stream: name, err: (err as Error).message }, 'updating the placement row\'s Kafka topic failed'))
      .then(() => target.send(status, headers, body, bodyDone));
  });
}

/** The address of `node`'s listener of this kind (its protocol listener, or its `--ds-listen` one), or null when it runs none. */
export function listenerAddress(listener: OwnedListener, node: NodeRecord): string | null {
  return listener === 'svc' ? (node.protocol === 'svc' ? node.advertisedAddress : null) : node.protocol === 'ds' ? node.advertisedAddress : node.dsAddress;
}

/** 307 to the owner's listener of the same kind, with the same path and query. */
function redirect(listener: OwnedListener, req: HttpRequest, res: HttpResponse, name: string, owner: Extract<Owner, { kind: 'remote' }>): void {
  const host = listenerAddress(listener, owner.node);
  if (host === null) return fail(listener, req, res, new SvcError('storage_unavailable', `stream ${name} is owned by node ${owner.node.nodeId}, which runs no ${listener === 'svc' ? 'Svc' : 'Durable Streams'} listener`));
  redirectTo(listener, req, res, host, owner.node.nodeId);
}

/** 307 to `host` (node `nodeId`'s listener), with the same path and query. */
export function redirectTo(listener: OwnedListener, req: HttpRequest, res: HttpResponse, host: string, nodeId: number): void {
  const location = `http://${host}${req.path}${req.query === '' ? '' : '?' + req.query}`;
  send(listener, req, res, 307, [['location', location], ['svc-owner-node', String(nodeId)]], '');
}

/**
 * A request served here whose stream moved away meanwhile (a fenced append's `moved` outcome)
 * answers 503: when the view now names another live owner, the client gets a 307 there instead,
 * as if it had arrived a moment later. Nothing of it was stored. Other 503s (a stalled store:
 * outcome unknown) stay 503s.
 */
function movedAway(listener: OwnedListener, req: HttpRequest, res: HttpResponse, name: string, d: OwnerCheckDeps): HttpResponse {
  return withSend(res, (target, status, headers, body, bodyDone) => {
    const now = isMovedReply(listener, status, body) ? d.placement.ownerNow(name) : null;
    // A redirect sends another body: this one is never read, so it is dropped (never reused).
    if (now !== null && now.kind === 'remote') return redirect(listener, req, target, name, now);
    target.send(status, headers, body, bodyDone);
  });
}

/** The reply is the 503 of the `moved` outcome (gateway/kit/http-errors.ts: error `moved`; ds/ds-errors.ts: its message). */
export function isMovedReply(listener: OwnedListener, status: number, body: ResponseBody | undefined): boolean {
  // An error reply is one buffer or a string, never parts (a read page's).
  if (status !== 503 || body === undefined || isParts(body)) return false;
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return listener === 'svc' ? text.includes('"error":"moved"') : text.includes('moved to another node');
}

function fail(listener: OwnedListener, req: HttpRequest, res: HttpResponse, err: SvcError): void {
  const e = listener === 'svc' ? toHttpError(err) : toDsError(err);
  send(listener, req, res, e.status, e.headers, e.body ?? '');
}

function send(listener: OwnedListener, req: HttpRequest, res: HttpResponse, status: number, headers: HeaderList, body: ResponseBody): void {
  if (res.aborted) return;
  const all: HeaderList = listener === 'ds' ? [...COMMON_HEADERS, ...headers] : headers;
  res.send(status, all, req.method === 'HEAD' ? undefined : body);
}
