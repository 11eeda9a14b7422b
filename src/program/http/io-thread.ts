/**
 * An I/O thread's entry (io-threads.ts): a uWS app on the listener's port (SO_REUSEPORT), which
 * reads requests, hands each to the main thread, and applies the response operations that come
 * back — socket writes included, which is the point: a fan-out's writes spread over the threads.
 * What the engine does before a handler (framing checks, malformed heads, body limits) runs here,
 * unchanged (uws-engine.ts).
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { type HttpRequest, type HttpResponse, type LocalGateway } from './engine';
import { runHandler } from './run-handler';
import { type ControlMessage, type EventsMessage, type HeadMeta, Op, type OpsMessage, type RefuseMeta, type RequestHeadWire, type ThreadStatus } from './io-wire';
import { type RequestHead, type UwsResponse, type UwsServer, listenUws } from './uws-engine';
import { type WriteCut } from './write-pacing';

interface IoThreadData {
  host: string;
  port: number;
  bodyLimit: number;
  name: string | undefined;
  writeIdleMs: number | undefined;
  /** A gateway thread's handler (engine.ts, GatewayThreadSpec); absent: every request goes to the main thread. */
  gateway: { module: string; data: unknown; port: MessagePort } | undefined;
}

/** This thread's own handler when it is a gateway thread. */
let local: LocalGateway | null = null;

const port = parentPort!;
const data = workerData as IoThreadData;
const responses = new Map<number, HttpResponse>();
let nextId = 1;

let events: EventsMessage | null = null;

/** This turn's message to the main thread, posted once the turn's I/O is handled. */
function out(): EventsMessage {
  if (events === null) {
    events = { t: 'events', requests: [], tooLarge: [], aborted: [], writable: [], blocked: [], cuts: [] };
    setImmediate(flush);
  }
  return events;
}

function flush(): void {
  const m = events;
  events = null;
  if (m === null) return;
  port.postMessage(m, m.requests.map((r) => r.body));
}

function headOf(h: RequestHead): RequestHeadWire {
  return { method: h.method, path: h.path, query: h.query, headers: { ...h.headers } };
}

function track(res: HttpResponse): number {
  const id = nextId++;
  responses.set(id, res);
  res.onAborted(() => {
    if (responses.delete(id)) out().aborted.push(id);
  });
  res.onWritable(() => {
    if (responses.has(id)) out().writable.push(id);
  });
  return id;
}

function handle(req: HttpRequest, res: HttpResponse): void {
  // A gateway thread answers what its handler serves here, without a hop (docs/config.md, --gateway-threads).
  if (local !== null && local.serves(req)) return runHandler(local.handler, req, res);
  const id = track(res);
  // A copy of exactly the body's bytes, so the transfer moves nothing else.
  const body = new Uint8Array(req.body.byteLength);
  body.set(req.body);
  out().requests.push({ id, head: headOf(req), body: body.buffer });
}

function refuseTooLarge(head: RequestHead, res: UwsResponse): void {
  // The answer is the main thread's (its protocol's error shape, CORS, request id).
  out().tooLarge.push({ id: track(res), head: headOf(head) });
}

function apply(m: OpsMessage): void {
  const bytes = new Uint8Array(m.data);
  const ops = m.ops;
  let meta = 0;
  for (let i = 0; i < ops.length; i += 4) {
    const op = ops[i]! as Op;
    const id = ops[i + 1]!;
    const length = ops[i + 3]!;
    const chunk = length < 0 ? undefined : bytes.subarray(ops[i + 2]!, ops[i + 2]! + length);
    const needsMeta = op === Op.Head || op === Op.Send || op === Op.Refuse;
    const info = needsMeta ? m.meta[meta++]! : undefined;
    const res = responses.get(id);
    if (res === undefined) continue; // aborted meanwhile
    try {
      switch (op) {
        case Op.Head:
          res.writeHead(info!.status, (info as HeadMeta).headers);
          break;
        case Op.Write:
          if (!res.write(chunk!)) out().blocked.push(id);
          break;
        case Op.End:
          responses.delete(id);
          res.end(chunk);
          break;
        case Op.Send:
          responses.delete(id);
          res.send(info!.status, info!.headers, chunk);
          break;
        case Op.Refuse:
          responses.delete(id);
          (res as UwsResponse).refuse(info as RefuseMeta);
          break;
        case Op.Destroy:
          responses.delete(id);
          res.destroy();
          break;
      }
    } catch {
      // The main thread checked the status and headers already; whatever still fails here
      // cannot be answered honestly: close the connection.
      responses.delete(id);
      try {
        res.destroy();
      } catch {
        // already gone
      }
    }
  }
}

async function main(): Promise<void> {
  let server: UwsServer;
  try {
    if (data.gateway !== undefined) {
      // By path, not by import: the gateway's handlers are a layer above this engine.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const m = require(data.gateway.module) as { startGateway(data: unknown, port: MessagePort): Promise<LocalGateway> };
      local = await m.startGateway(data.gateway.data, data.gateway.port);
    }
    // A response this thread cuts (write-idle timeout) is logged by the main thread; its handler
    // learns of it as an abort, through the response's onAborted (track, above).
    const cut = (c: WriteCut): void => void out().cuts.push(c);
    server = await listenUws({ host: data.host, port: data.port, bodyLimit: data.bodyLimit, name: data.name, writeIdleMs: data.writeIdleMs }, handle, refuseTooLarge, cut);
  } catch (err) {
    port.postMessage({ t: 'listen-failed', message: err instanceof Error ? err.message : String(err) } satisfies ThreadStatus);
    return;
  }
  port.on('message', (m: OpsMessage | ControlMessage) => {
    if (m.t === 'ops') apply(m);
    else if (m.t === 'stop-accepting') server.stopAccepting();
    else if (m.t === 'close') {
      void server.close().then(() => {
        port.postMessage({ t: 'closed' } satisfies ThreadStatus);
        port.close();
      });
    }
  });
  port.postMessage({ t: 'listening' } satisfies ThreadStatus);
}

void main();
