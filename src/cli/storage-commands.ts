/**
 * `svc check` and `svc repair`: offline tools for a stopped node's data directory
 * (docs/storage.md). The work is done by the data plane (src/shards/log-check.ts), handed in by
 * main.ts, so this file only parses flags and prints reports.
 *
 * Exit codes: check — 0 nothing damaged (torn tails, which the node cuts itself, are listed),
 * 1 damage found or the check could not run, 2 usage; repair — 0 the node can start again,
 * 1 something is left that needs a backup, 2 usage.
 */
import { type CliIo, type Command, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './commands';

/** What the tools report (the shapes of src/shards/log-check.ts). */
export interface StorageFinding {
  shard: number;
  file: string;
  kind: 'damage' | 'torn' | 'missing' | 'index';
  message: string;
}
/** A damaged range of the object store (the shape of src/objects/ledger-check.ts). */
export interface ObjectFinding {
  stream: string;
  from_seq: number;
  to_seq: number;
  object: string;
  offset: number;
  length: number;
  kind: string;
  reason: string;
}
export interface StorageTools {
  /** Objects mode: every range the ledger under `metadataUrl` names in the store at `objectsUrl` (`streams`: only those). */
  checkObjects(objectsUrl: string, metadataUrl: string, streams: string[]): Promise<{ streams: number; entries: number; bytes: number; damaged: ObjectFinding[]; unreadable: Array<{ stream: string; object: string; reason: string }> }>;
  check(dataDir: string): Promise<{ shards: number; segments: number; frames: number; findings: StorageFinding[]; damaged: boolean; journaled: number }>;
  repair(dataDir: string): Promise<{ actions: Array<{ shard: number; file: string; action: string }>; unrepaired: StorageFinding[] }>;
}

function dataDirArg(name: string, args: string[], io: CliIo): string | null {
  let dir: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--data-dir' && i + 1 < args.length) dir = args[++i]!;
    else if (a.startsWith('--data-dir=')) dir = a.slice('--data-dir='.length);
    else {
      io.stderr(`svc ${name}: unknown argument "${a}"\nRun \`svc ${name} --help\`.\n`);
      return null;
    }
  }
  if (dir === null || dir === '') io.stderr(`svc ${name}: --data-dir is required\nRun \`svc ${name} --help\`.\n`);
  return dir === '' ? null : dir;
}

/** `svc check`'s flags: a data directory, or an object store and its ledger. */
function checkArgs(args: string[], io: CliIo): { dataDir: string } | { objects: string; metadata: string; streams: string[] } | null {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (!['--data-dir', '--objects', '--metadata', '--stream'].includes(name) || (eq < 0 && i + 1 >= args.length)) {
      io.stderr(`svc check: unknown argument "${a}"\nRun \`svc check --help\`.\n`);
      return null;
    }
    flags.set(name, [...(flags.get(name) ?? []), eq > 0 ? a.slice(eq + 1) : args[++i]!]);
  }
  const one = (n: string): string | undefined => flags.get(n)?.[flags.get(n)!.length - 1];
  const dataDir = one('--data-dir');
  const objects = one('--objects');
  const metadata = one('--metadata');
  if (dataDir !== undefined && dataDir !== '' && objects === undefined && metadata === undefined && !flags.has('--stream')) return { dataDir };
  if (dataDir === undefined && objects !== undefined && objects !== '' && metadata !== undefined && metadata !== '') return { objects, metadata, streams: flags.get('--stream') ?? [] };
  io.stderr('svc check: give --data-dir <dir>, or --objects <url> with --metadata etcd://…/<prefix>\nRun `svc check --help`.\n');
  return null;
}

const objectLine = (d: ObjectFinding): string =>
  d.object === '' ? `stream ${d.stream}: records ${d.from_seq}..${d.to_seq}: ${d.kind}: ${d.reason}\n` : `stream ${d.stream}: records ${d.from_seq}..${d.to_seq} in object ${d.object} bytes ${d.offset}..${d.offset + d.length}: ${d.kind}: ${d.reason}\n`;

const line = (f: StorageFinding): string => `shard ${f.shard}: ${f.file}: ${f.message}\n`;

export function storageCommands(tools: StorageTools): Command[] {
  const check: Command = {
    name: 'check',
    summary: 'verify every segment and index of a stopped node (offline)',
    usage: () =>
      [
        'Usage: svc check --data-dir <dir>',
        '       svc check --objects <url> --metadata etcd://host:port[,…]/<prefix> [--stream <name>]…',
        '',
        "Reads every segment file of the stopped node's data directory and checks each frame's",
        'length, type and CRC-32C; opens each shard index and checks that every segment it refers to',
        'exists. Prints what it finds, naming the stream and seqs a damaged frame or a missing',
        'segment held (from the frame header and the index). Exit 0: nothing damaged (a torn tail, which the node cuts',
        'itself on start, is listed); 1: damage found (run `svc repair`), or the check could not run.',
        '',
        'With --objects and --metadata (objects mode; the nodes may keep running): reads back every',
        "byte range the object ledger names for each stream (or each --stream) and checks that the",
        "object exists, holds the range and that every frame's length and CRC-32C are right; a seq",
        'no ledger entry holds is listed too. Each damaged range is named by stream, seqs, object and',
        'bytes, as a read that reaches it answers (`data_corrupt`). Writes nothing. Exit 0: nothing',
        'damaged; 1: damage found, or a range the store did not answer.',
        '',
      ].join('\n'),
    async run(args: string[], io: CliIo): Promise<number> {
      const a = checkArgs(args, io);
      if (a === null) return EXIT_USAGE;
      if ('objects' in a) {
        try {
          const r = await tools.checkObjects(a.objects, a.metadata, a.streams);
          for (const d of r.damaged) io.stderr(objectLine(d));
          for (const u of r.unreadable) io.stderr(`stream ${u.stream}: object ${u.object}: not read: ${u.reason}\n`);
          const bad = r.damaged.length > 0 || r.unreadable.length > 0;
          io.stdout(
            `${r.streams} streams, ${r.entries} ranges, ${r.bytes} bytes read: ${r.damaged.length > 0 ? `DAMAGED — ${r.damaged.length} range(s); reads that reach them answer data_corrupt, every other record is served` : r.unreadable.length > 0 ? `INCOMPLETE — ${r.unreadable.length} range(s) not read` : 'ok'}\n`,
          );
          return bad ? EXIT_FAILURE : EXIT_OK;
        } catch (err) {
          io.stderr(`svc check: ${(err as Error).message}\n`);
          return EXIT_FAILURE;
        }
      }
      const dir = a.dataDir;
      try {
        const r = await tools.check(dir);
        for (const f of r.findings) (f.kind === 'torn' ? io.stdout : io.stderr)(line(f));
        if (r.journaled > 0) {
          io.stdout(`${r.journaled} write(s) acknowledged through the sync journal are not in their segments yet: the node's next start (or \`svc repair\`) writes them back first, so a torn or short tail listed here may be theirs\n`);
        }
        io.stdout(`${r.shards} shards, ${r.segments} segments, ${r.frames} valid frames: ${r.damaged ? 'DAMAGED — run `svc repair --data-dir ' + dir + '` (stop the node first) or restore from a backup' : 'ok'}\n`);
        return r.damaged ? EXIT_FAILURE : EXIT_OK;
      } catch (err) {
        io.stderr(`svc check: ${(err as Error).message}\n`);
        return EXIT_FAILURE;
      }
    },
  };
  const repair: Command = {
    name: 'repair',
    summary: 'quarantine damaged frames of a stopped node so that it starts again (offline)',
    usage: () =>
      [
        'Usage: svc repair --data-dir <dir>',
        '',
        'Stop the node first. Copies every damaged frame into a side file under',
        '<dir>/shards/<k>/quarantine/ and overwrites it with padding of the same size (every valid',
        'frame stays where it is; the records of a damaged frame are lost and readers skip their',
        'seqs), cuts torn tails, and moves an index that cannot be opened or refers to missing',
        'segments into the quarantine folder (the shard rebuilds it from its segments on start).',
        "Before an index goes, each stream's next seq is kept from it: new appends get seqs above",
        'every seq it knew acknowledged, and the seqs of a lost segment stay a gap readers skip.',
        'Exit 0: the node can start; 1: something is left that needs a backup.',
        '',
      ].join('\n'),
    async run(args: string[], io: CliIo): Promise<number> {
      const dir = dataDirArg('repair', args, io);
      if (dir === null) return EXIT_USAGE;
      try {
        const r = await tools.repair(dir);
        for (const a of r.actions) io.stdout(`shard ${a.shard}: ${a.file}: ${a.action}\n`);
        for (const f of r.unrepaired) io.stderr(line(f));
        io.stdout(r.actions.length === 0 && r.unrepaired.length === 0 ? 'nothing to repair\n' : `${r.actions.length} repaired, ${r.unrepaired.length} left\n`);
        return r.unrepaired.length > 0 ? EXIT_FAILURE : EXIT_OK;
      } catch (err) {
        io.stderr(`svc repair: ${(err as Error).message}\n`);
        return EXIT_FAILURE;
      }
    },
  };
  return [check, repair];
}
