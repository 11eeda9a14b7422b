/**
 * GET over a connection of its own that reads the response at a chosen rate (or at full speed),
 * for tests of slow readers: the socket is paused after each read for as long as the bytes read
 * "cost" at `bytesPerSecond`, so the server sees a peer that keeps reading, slowly, and a write
 * queue that drains at that rate. The body is hashed as it arrives (64 readers of 32 MiB would
 * otherwise hold 2 GiB in the test process).
 */
import { createHash } from 'node:crypto';
import * as net from 'node:net';

export interface ThrottledGetResult {
  status: number;
  /** Content-Length of the response (-1 when it had none). */
  length: number;
  /** Body bytes received. */
  received: number;
  /** sha256 (hex) of the body bytes received. */
  sha256: string;
  /** The response was whole: `received === length`. */
  complete: boolean;
  ms: number;
  /** When the head, and the last bytes, arrived (ms after the request). */
  headMs: number;
  lastMs: number;
  /** The body was chunked and ended with its last chunk (`0\r\n\r\n`). */
  chunkedEnd: boolean;
}

export interface ThrottledGetOptions {
  /** Read rate; 0 or undefined = as fast as the socket delivers. */
  bytesPerSecond?: number;
  headers?: Record<string, string>;
  /** Give up (and resolve with what arrived) after this long. */
  timeoutMs?: number;
  /** Stop reading once this many body bytes arrived, for `holdMs` (a client that reads nothing for a while). */
  holdAfter?: number;
  holdMs?: number;
}

export function throttledGet(url: string, target: string, o: ThrottledGetOptions = {}): Promise<ThrottledGetResult> {
  const u = new URL(url);
  const rate = o.bytesPerSecond ?? 0;
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(u.port), u.hostname);
    const hash = createHash('sha256');
    let head = Buffer.alloc(0);
    let status = 0;
    let length = -1;
    let received = 0;
    let inHead = true;
    let done = false;
    // Pacing from the start: a reader that fell behind its rate by a scheduling hiccup catches up.
    let budgetStart = 0;
    let held = false;
    let chunked = false;
    let tail = '';
    let headMs = -1;
    let lastMs = -1;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, length, received, sha256: hash.digest('hex'), complete: length >= 0 && received === length, ms: Date.now() - started, headMs, lastMs, chunkedEnd: chunked && tail.endsWith('\r\n0\r\n\r\n') });
    };
    const timer = setTimeout(finish, o.timeoutMs ?? 120_000);
    const body = (b: Buffer): void => {
      const take = length >= 0 ? b.subarray(0, Math.max(0, length - received)) : b;
      hash.update(take);
      received += take.length;
      if (chunked) {
        tail = (tail + take.toString('latin1')).slice(-16);
        if (tail.endsWith('\r\n0\r\n\r\n')) finish();
      }
      if (length >= 0 && received >= length) finish();
    };
    socket.on('data', (d: Buffer) => {
      lastMs = Date.now() - started;
      if (inHead) {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        inHead = false;
        const lines = head.subarray(0, end).toString('latin1').split('\r\n');
        status = Number(lines[0]!.split(' ')[1]);
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          const name = line.slice(0, colon).trim().toLowerCase();
          if (name === 'content-length') length = Number(line.slice(colon + 1).trim());
          if (name === 'transfer-encoding' && /chunked/i.test(line.slice(colon + 1))) chunked = true;
        }
        budgetStart = Date.now();
        headMs = budgetStart - started;
        body(head.subarray(end + 4));
      } else body(d);
      if (done) return;
      if (!held && o.holdAfter !== undefined && received >= o.holdAfter) {
        held = true;
        socket.pause();
        setTimeout(() => {
          budgetStart = Date.now() - (received / (rate || 1)) * 1000;
          socket.resume();
        }, o.holdMs ?? 0);
        return;
      }
      if (rate <= 0) return;
      // Behind schedule: wait until `received` bytes are due at `rate`.
      const due = budgetStart + (received / rate) * 1000 - Date.now();
      if (due > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), due);
      }
    });
    socket.on('error', finish);
    socket.on('close', finish);
    const extra = Object.entries(o.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ${u.host}\r\n${extra}\r\n`);
  });
}
