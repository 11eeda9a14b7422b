/**
 * `--metadata etcd://host:port[,host:port…]/<prefix>` (docs/config.md): the members to talk to
 * and the key prefix this cluster's metadata lives under, so one etcd can hold several clusters.
 * `etcds://…` is the same over TLS; the CA, the client certificate and the etcd user come from
 * their own settings (`--metadata-ca`, `--metadata-cert`, `--metadata-key`, `--metadata-user`,
 * `--metadata-password[-file]`), never from the URL, and reach every link as `EtcdAccess`.
 */

/** How a link reaches etcd beyond the members' addresses: TLS and etcd authentication. */
export interface EtcdAccess {
  /** TLS to every member (`etcds://`). */
  tls: boolean;
  /** PEM CA bundle the members' certificates must chain to; absent: the system's CAs. */
  ca?: Buffer;
  /** PEM client certificate and its key (etcd's `--client-cert-auth`). */
  cert?: Buffer;
  key?: Buffer;
  /** etcd user and password (etcd `auth enable`). */
  user?: string;
  password?: string;
}

/** What `--metadata-ca|cert|key|user|password` give; the URL's scheme says whether TLS is on. */
export type EtcdCredentials = Omit<EtcdAccess, 'tls'>;

export interface EtcdTarget {
  /** host:port of each member given (IPv6 hosts in brackets). */
  endpoints: string[];
  /** Key prefix without leading or trailing slashes, e.g. `svc/prod`. */
  prefix: string;
  /** TLS and credentials; `{tls: false}` for a plain `etcd://` without a user. */
  access: EtcdAccess;
}

const ENDPOINT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;
const PREFIX = /^[A-Za-z0-9._\-/]+$/;

/**
 * Parse an etcd metadata URL; throws an Error that says what is wrong. `credentials`: the CA,
 * client certificate and user given beside the URL (the scheme decides TLS).
 */
export function parseEtcdUrl(url: string, credentials: EtcdCredentials = {}): EtcdTarget {
  const m = /^(etcds?):\/\/([^/]*)\/(.*)$/.exec(url);
  if (m === null) throw new Error(`metadata URL ${JSON.stringify(url)}: expected etcd://host:port[,host:port…]/<prefix> (or etcds:// for TLS)`);
  const endpoints = m[2]!.split(',').filter((e) => e !== '');
  if (endpoints.length === 0) throw new Error(`metadata URL ${JSON.stringify(url)}: no etcd member given`);
  for (const e of endpoints) {
    const em = ENDPOINT.exec(e);
    if (em === null || Number(em[2]) < 1 || Number(em[2]) > 65535) throw new Error(`metadata URL ${JSON.stringify(url)}: ${JSON.stringify(e)} is not host:port`);
  }
  const prefix = m[3]!.replace(/^\/+|\/+$/g, '');
  if (prefix === '' || !PREFIX.test(prefix) || prefix.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`metadata URL ${JSON.stringify(url)}: the prefix must be non-empty path segments of A-Z a-z 0-9 . _ -`);
  }
  const tls = m[1] === 'etcds';
  if (!tls && (credentials.ca !== undefined || credentials.cert !== undefined || credentials.key !== undefined)) {
    throw new Error(`metadata URL ${JSON.stringify(url)}: a CA or client certificate needs etcds:// (TLS)`);
  }
  return { endpoints, prefix, access: { tls, ...credentials } };
}
