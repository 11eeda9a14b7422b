/**
 * Why a listener could not bind its address, said the same way by both engines and the I/O threads:
 * the listener's name, the address, and the reason (README.md, "One process per port").
 */
import * as net from 'node:net';

export interface ListenTarget {
  host: string;
  port: number;
  /** `protocol listener`, `admin listener`, … (ListenOptions.name). */
  name?: string;
}

function address(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** An error whose message names the listener, its address and the reason; `code` is the errno name when known. */
export function listenError(target: ListenTarget, err: unknown): Error & { code?: string } {
  const code = (err as { code?: unknown } | null)?.code;
  const what = `${target.name ?? 'listener'} cannot listen on ${address(target.host, target.port)}`;
  const why =
    code === 'EADDRINUSE'
      ? `port ${target.port} is in use by another process (EADDRINUSE); stop it or choose another port`
      : code === 'EADDRNOTAVAIL'
        ? `${target.host} is not an address of this machine (EADDRNOTAVAIL)`
        : code === 'EACCES'
          ? `binding port ${target.port} is not permitted for this user (EACCES)`
          : err instanceof Error
            ? err.message
            : String(err);
  return Object.assign(new Error(`${what}: ${why}`), typeof code === 'string' ? { code } : {});
}

/**
 * Why `host:port` cannot be bound, found by trying it with node:net (which never sets
 * SO_REUSEPORT, so it fails on a port any other socket listens on): an error with the errno's
 * `code`, or null when the address is free. uWS says only that it failed, not why.
 */
export function probeListen(host: string, port: number): Promise<(Error & { code?: string }) | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err) => resolve(err));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}
