/**
 * `--metadata etcd://host:port[,host:port…]/<prefix>` (docs/config.md): the members to talk to
 * and the key prefix this cluster's metadata lives under, so one etcd can hold several clusters.
 */

export interface EtcdTarget {
  /** host:port of each member given (IPv6 hosts in brackets). */
  endpoints: string[];
  /** Key prefix without leading or trailing slashes, e.g. `svc/prod`. */
  prefix: string;
}

const ENDPOINT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;
const PREFIX = /^[A-Za-z0-9._\-/]+$/;

/** Parse an etcd metadata URL; throws an Error that says what is wrong. */
export function parseEtcdUrl(url: string): EtcdTarget {
  const m = /^etcd:\/\/([^/]*)\/(.*)$/.exec(url);
  if (m === null) throw new Error(`metadata URL ${JSON.stringify(url)}: expected etcd://host:port[,host:port…]/<prefix>`);
  const endpoints = m[1]!.split(',').filter((e) => e !== '');
  if (endpoints.length === 0) throw new Error(`metadata URL ${JSON.stringify(url)}: no etcd member given`);
  for (const e of endpoints) {
    const em = ENDPOINT.exec(e);
    if (em === null || Number(em[2]) < 1 || Number(em[2]) > 65535) throw new Error(`metadata URL ${JSON.stringify(url)}: ${JSON.stringify(e)} is not host:port`);
  }
  const prefix = m[2]!.replace(/^\/+|\/+$/g, '');
  if (prefix === '' || !PREFIX.test(prefix) || prefix.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`metadata URL ${JSON.stringify(url)}: the prefix must be non-empty path segments of A-Z a-z 0-9 . _ -`);
  }
  return { endpoints, prefix };
}
