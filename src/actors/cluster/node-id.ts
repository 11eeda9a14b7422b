/**
 * This node's id (docs/cluster.md, "Node ids"): `--node-id`, or the id kept in `<dataDir>/node-id`,
 * or — at a first start without the flag — allocated from the metadata: the smallest id whose
 * `nodes/<id>` record does not exist, claimed with a create-only write so that two nodes starting
 * at once never take the same one. The data directory keeps its id for ever after: its streams
 * belong to that node, so a different `--node-id` on it is refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type MetaStore, MetaConflictError } from '../meta/meta-store';
import { type NodeRecord, nodeKey } from './node-record';

const FILE = 'node-id';
/** Ids tried before giving up (a cluster this large is not one etcd prefix's business). */
const MAX_ID = 100_000;

export interface NodeIdOptions {
  /** `--node-id`; 0 when not given. */
  flag: number;
  dataDir: string;
  /** False with the embedded metadata store: it holds one node, id 1 unless the flag says otherwise. */
  clustered: boolean;
  /** The slots a newly allocated node starts with. */
  defaultSlots: number;
}

export async function resolveNodeId(meta: MetaStore, o: NodeIdOptions): Promise<number> {
  const file = path.join(o.dataDir, FILE);
  const kept = readKept(file);
  if (kept !== null) {
    if (o.flag !== 0 && o.flag !== kept) {
      throw new Error(`--node-id ${o.flag}: the data directory ${o.dataDir} belongs to node ${kept} (its streams are that node's); start it as node ${kept} or use another data directory`);
    }
    return kept;
  }
  const id = o.flag !== 0 ? o.flag : o.clustered ? await allocate(meta, o.defaultSlots) : 1;
  writeKept(file, id);
  return id;
}

function readKept(file: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (!/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > 2147483647) throw new Error(`${file}: not a node id (${JSON.stringify(text)}); it holds the integer id of the node this data directory belongs to`);
  return Number(text);
}

/** Temporary file, fsync, rename, fsync of the directory: the id survives a crash right after. */
function writeKept(file: string, id: number): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, `${id}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

async function allocate(meta: MetaStore, slots: number): Promise<number> {
  await meta.sync();
  for (let id = 1; id <= MAX_ID; id++) {
    if (meta.get(nodeKey(id)) !== null) continue;
    // Epoch 0: not started yet; registration makes it 1.
    const placeholder: NodeRecord = { nodeId: id, nodeEpoch: 0, advertisedAddress: '', protocol: 'svc', dsAddress: null, kafkaAddress: '', adminAddress: null, slots };
    try {
      await meta.put(nodeKey(id), placeholder, { absent: true });
      return id;
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      // Another node took it a moment ago: try the next one.
    }
  }
  throw new Error(`no free node id up to ${MAX_ID}`);
}
