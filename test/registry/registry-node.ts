/** What the schema registry tests share: the registry listener's URL from a node's start line, and a bootstrap token. */
import { randomBytes } from 'node:crypto';
import { type NodeProcess } from '../helpers/node-process';

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

/** A fresh bootstrap token (`BASE64URL(id).BASE64URL(32 bytes)`) for a node started with `--auth required`. */
export const newRootToken = (): string => b64url('root') + '.' + b64url(randomBytes(32));

/** The schema registry listener's base URL, from the `node started` line (`--schema-registry-listen 127.0.0.1:0`). */
export function registryUrl(node: NodeProcess): string {
  const line = node
    .output()
    .split('\n')
    .find((l) => l.includes('"node started"'));
  const started = JSON.parse(line!) as { schemaRegistry: string | null };
  if (started.schemaRegistry === null) throw new Error('the node runs no schema registry listener');
  return `http://${started.schemaRegistry}`;
}
