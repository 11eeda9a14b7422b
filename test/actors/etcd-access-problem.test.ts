/**
 * Which TLS failures stop a node's start as its own misconfiguration (`accessProblem`), and which
 * are a member that is busy or starting, retried like any member that does not answer. The
 * errors are real ones from node:tls: a server that closes the connection mid-handshake, and one
 * whose certificate the client does not trust.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { accessProblem } from '../../src/actors/meta/etcd/etcd-link';
import { makeEtcdTls } from '../helpers/etcd-cluster';
import { tempDir } from '../helpers/node-process';

const access = { tls: true } as const;

function tlsError(port: number, options: tls.ConnectionOptions = {}): Promise<Error> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ...options }, () => {
      s.destroy();
      reject(new Error('handshake completed'));
    });
    s.on('error', resolve);
  });
}

test('a connection closed mid-handshake is not a certificate problem (retried)', async () => {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const err = await tlsError((server.address() as net.AddressInfo).port);
    expect(err.message).toMatch(/disconnected before secure TLS connection/);
    // As the HTTP/2 session reports it: the pending stream canceled, caused by the socket's error.
    const wrapped = Object.assign(new Error('The pending stream has been canceled', { cause: err }), { code: 'ERR_HTTP2_STREAM_CANCEL' });
    expect(accessProblem(wrapped, access)).toBeNull();
  } finally {
    server.close();
  }
});

test('a member certificate the CA did not sign is named as the CA setting', async () => {
  const t = makeEtcdTls(tempDir('svc-tls-'));
  const server = tls.createServer({ key: fs.readFileSync(t.serverKey), cert: fs.readFileSync(t.serverCert) }, (s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const err = await tlsError((server.address() as net.AddressInfo).port);
    expect(accessProblem(err, access)).toMatch(/certificate is not trusted \(--metadata-ca\)/);
  } finally {
    server.close();
  }
});
