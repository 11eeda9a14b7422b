/**
 * One keep-alive HTTP/1.1 connection for `svc bench`: it writes a prepared request and reads
 * the answer with a minimal parser (status line, Content-Length or chunked body). node:http's
 * client costs several times more CPU per request than this, and a load generator that shares
 * two cores with the node under test must stay cheap to measure the node and not itself (wrk
 * works the same way). One request at a time per connection; no pipelining.
 */
import * as net from 'node:net';

export interface Answer {
  status: number;
  /** Body bytes received. */
  bytes: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export class BenchConnection {
  #socket: net.Socket | null = null;
  #buf: Buffer = Buffer.alloc(0);
  #pending: { socket: net.Socket; resolve: (a: Answer) => void; reject: (e: Error) => void } | null = null;
  /** Parse state of the answer being read. */
  #head: { status: number; length: number | null; chunked: boolean; close: boolean; bodyStart: number } | null = null;
  #chunkPos = 0;
  #bodyBytes = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  #connect(): net.Socket {
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    s.on('data', (d: Buffer) => {
      this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
      this.#parse();
    });
    const fail = (err: Error) => {
      if (this.#socket === s) this.#socket = null;
      if (this.#pending?.socket !== s) return; // an old socket closing after its last answer
      const p = this.#pending;
      this.#pending = null;
      this.#reset();
      p?.reject(err);
    };
    s.on('error', fail);
    s.on('close', () => fail(new Error('connection closed')));
    return s;
  }

  #reset(): void {
    this.#buf = Buffer.alloc(0);
    this.#head = null;
    this.#chunkPos = 0;
    this.#bodyBytes = 0;
  }

  /** Sends `request` (complete HTTP/1.1 request bytes) and resolves with the answer. */
  send(request: Buffer): Promise<Answer> {
    if (this.#socket === null) this.#socket = this.#connect();
    const s = this.#socket;
    return new Promise<Answer>((resolve, reject) => {
      this.#pending = { socket: s, resolve, reject };
      s.write(request);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  #parse(): void {
    if (this.#head === null) {
      const end = this.#buf.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.#buf.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(head[0]!.split(' ')[1]);
      let length: number | null = null;
      let chunked = false;
      let close = false;
      for (let i = 1; i < head.length; i++) {
        const line = head[i]!;
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim().toLowerCase();
        if (name === 'content-length') length = Number(value);
        else if (name === 'transfer-encoding') chunked = value.includes('chunked');
        else if (name === 'connection') close = value === 'close';
      }
      this.#head = { status, length, chunked, close, bodyStart: end + 4 };
      this.#chunkPos = end + 4;
    }
    const h = this.#head;
    let done = false;
    let consumed = 0;
    if (h.chunked) {
      // Walk chunk headers: <hex size>\r\n<data>\r\n … 0\r\n\r\n (no trailers from the node).
      for (;;) {
        const lineEnd = this.#buf.indexOf('\r\n', this.#chunkPos);
        if (lineEnd < 0) break;
        const size = parseInt(this.#buf.subarray(this.#chunkPos, lineEnd).toString('latin1'), 16);
        if (size === 0) {
          if (this.#buf.length < lineEnd + 4) break;
          consumed = lineEnd + 4;
          done = true;
          break;
        }
        if (this.#buf.length < lineEnd + 2 + size + 2) break;
        this.#bodyBytes += size;
        this.#chunkPos = lineEnd + 2 + size + 2;
      }
    } else {
      const length = h.length ?? 0;
      if (this.#buf.length >= h.bodyStart + length) {
        this.#bodyBytes = length;
        consumed = h.bodyStart + length;
        done = true;
      }
    }
    if (!done) return;
    const answer = { status: h.status, bytes: this.#bodyBytes };
    const rest = this.#buf.subarray(consumed);
    this.#reset();
    this.#buf = rest;
    if (h.close) this.close();
    const p = this.#pending;
    this.#pending = null;
    p?.resolve(answer);
  }
}
