/**
 * Appends pipelined in one TCP write (the node engine answers pipelined requests; the uWS one
 * refuses them): the listener reads them in one turn, so a worker's shards start their groups in
 * one turn and the commit barrier makes them durable through the sync journal.
 */
import * as net from 'node:net';

/**
 * POST one body to each stream, all pipelined in one TCP write, so the listener reads them in one
 * turn and the worker gets them in one message (the gateway posts once per turn); resolves with
 * the status of each answer.
 */
export function pipelinedBurst(url: string, appends: Array<[string, string]>): Promise<number[]> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let buf = Buffer.alloc(0);
    const statuses: number[] = [];
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = buf.subarray(0, end).toString();
        const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) break;
        statuses.push(Number(head.split(' ')[1]));
        buf = buf.subarray(end + 4 + len);
      }
      if (statuses.length === appends.length) {
        sock.end();
        resolve(statuses);
      }
    });
    sock.write(appends.map(([name, body]) => `POST /${name} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`).join(''));
  });
}
