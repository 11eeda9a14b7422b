/** Free loopback ports for tests that start servers which cannot listen on port 0 themselves. */
import * as net from 'node:net';

/**
 * `n` distinct ports free right now on 127.0.0.1. All listeners stay bound until every port is
 * chosen: releasing one before binding the next can hand out the same port twice (seen in CI: two
 * members got one peer port and etcd refused the duplicate URL).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      s.unref();
      servers.push(s);
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
  }
}

/** One port free right now on 127.0.0.1 (bound and released; the caller binds it a moment later). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}
