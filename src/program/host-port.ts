/**
 * host:port, the address form every program's listeners take (svc's `--listen`, svc-cache's
 * `[server] listen`, svc-connectors' `[http] address`). One parser so that all three accept the
 * same text and say the same thing about what they refuse:
 *
 *   127.0.0.1:4437   localhost:0   [::1]:9090   [::]:0
 *
 * An IPv6 host goes in brackets (`::1:80` is ambiguous: is 80 the port or the last group?);
 * the port is decimal, 0 to 65535 (0 asks the system for a free port).
 */
import { BlockList, isIP } from 'node:net';

export interface HostPort {
  /** A name or an address; an IPv6 address without its brackets. */
  readonly host: string;
  /** 0 to 65535; 0 picks a free port when binding. */
  readonly port: number;
}

export type HostPortResult = { readonly ok: true; readonly address: HostPort } | { readonly ok: false; readonly error: string };

/** What a host:port setting must look like, for error messages. */
export const HOST_PORT_FORM = 'host:port with a port from 0 to 65535 (IPv6 as [::1]:port)';

const BAD_HOST = /[\s/[\]]/;

/** Parse `host:port` or `[ipv6]:port`; the error says what is wrong with `text`. */
export function parseHostPort(text: string): HostPortResult {
  const fail = (why: string): HostPortResult => ({ ok: false, error: `${JSON.stringify(text)} is not ${HOST_PORT_FORM}: ${why}` });
  let host: string;
  let port: string;
  if (text.startsWith('[')) {
    const m = /^\[([^\]]*)\]:(.*)$/.exec(text);
    if (m === null) return fail(text.includes(']') ? 'a port must follow the bracketed host, as in [::1]:9090' : 'the bracket after the IPv6 host is missing');
    [host, port] = [m[1]!, m[2]!];
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return fail('the port is missing');
    [host, port] = [text.slice(0, colon), text.slice(colon + 1)];
    if (host.includes(':')) return fail('an IPv6 host goes in brackets, as in [::1]:9090');
  }
  if (host === '') return fail('the host is empty');
  if (BAD_HOST.test(host)) return fail('the host holds a space, a slash or a bracket');
  if (!/^\d{1,5}$/.test(port)) return fail(port === '' ? 'the port is missing' : 'the port is not a decimal number');
  const n = Number(port);
  if (n > 65535) return fail('the port is above 65535');
  return { ok: true, address: { host, port: n } };
}

/** "host:port", an IPv6 host in brackets. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 and the name `localhost` (any case). */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}
