/**
 * The sync journal's replay (src/shards/worker/sync-journal.ts): valid records go back into their
 * segment files, the first torn record ends the journal, a record of a segment the reaper deleted
 * is skipped, and the journal is gone afterwards.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SyncJournal, journalFile, pendingJournalRecords, replayJournal, replayJournals } from '../../src/shards/worker/sync-journal';
import { tempDir } from '../helpers/node-process';

const seg = (dataDir: string, shard: number, segId: number): string => path.join(dataDir, 'shards', String(shard), 'log', String(segId).padStart(10, '0') + '.seg');

function writeSeg(dataDir: string, shard: number, segId: number, bytes: Buffer): void {
  fs.mkdirSync(path.dirname(seg(dataDir, shard, segId)), { recursive: true });
  fs.writeFileSync(seg(dataDir, shard, segId), bytes);
}

describe('replaying a sync journal', () => {
  it('writes every record back at its place, in shards and segments of its own, then deletes the journal', async () => {
    const dataDir = tempDir('svc-journal-');
    writeSeg(dataDir, 0, 0, Buffer.from('aaaa'));
    writeSeg(dataDir, 3, 0, Buffer.from(''));
    const file = journalFile(dataDir, 0);
    const j = SyncJournal.open(file);
    await j.append([
      { shard: 0, segId: 0, pos: 4, bufs: [Buffer.from('bb'), Buffer.from('cc')] },
      { shard: 3, segId: 0, pos: 0, bufs: [Buffer.from('xyz')] },
    ]);
    await j.append([{ shard: 0, segId: 0, pos: 8, bufs: [Buffer.from('dd')] }]);
    j.close();
    // What a power cut leaves: the logs lost what only the journal made durable.
    fs.truncateSync(seg(dataDir, 0, 0), 4);
    fs.truncateSync(seg(dataDir, 3, 0), 0);
    expect(replayJournals(dataDir)).toBe(3);
    expect(fs.readFileSync(seg(dataDir, 0, 0), 'utf8')).toBe('aaaabbccdd');
    expect(fs.readFileSync(seg(dataDir, 3, 0), 'utf8')).toBe('xyz');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('stops at the first torn record: the barrier it belongs to was never acknowledged', async () => {
    const dataDir = tempDir('svc-journal-');
    writeSeg(dataDir, 1, 0, Buffer.alloc(0));
    const file = journalFile(dataDir, 1);
    const j = SyncJournal.open(file);
    await j.append([{ shard: 1, segId: 0, pos: 0, bufs: [Buffer.from('first')] }]);
    await j.append([{ shard: 1, segId: 0, pos: 5, bufs: [Buffer.from('second')] }]);
    j.close();
    // Tear the second record: its last bytes never reached the disk.
    fs.truncateSync(file, fs.statSync(file).size - 2);
    expect(replayJournal(file, dataDir)).toBe(1);
    expect(fs.readFileSync(seg(dataDir, 1, 0), 'utf8')).toBe('first');
  });

  it('stops at a record whose bytes fail their CRC', async () => {
    const dataDir = tempDir('svc-journal-');
    writeSeg(dataDir, 1, 0, Buffer.alloc(0));
    const file = journalFile(dataDir, 1);
    const j = SyncJournal.open(file);
    await j.append([{ shard: 1, segId: 0, pos: 0, bufs: [Buffer.from('good')] }]);
    await j.append([{ shard: 1, segId: 0, pos: 4, bufs: [Buffer.from('evil')] }]);
    j.close();
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    fs.writeFileSync(file, bytes);
    expect(replayJournal(file, dataDir)).toBe(1);
    expect(fs.readFileSync(seg(dataDir, 1, 0), 'utf8')).toBe('good');
  });

  it('skips a segment the reaper deleted (a newer one exists) but recreates a newest segment whose file is missing', async () => {
    const dataDir = tempDir('svc-journal-');
    writeSeg(dataDir, 2, 5, Buffer.from('live'));
    const file = journalFile(dataDir, 0);
    const j = SyncJournal.open(file);
    await j.append([
      { shard: 2, segId: 4, pos: 10, bufs: [Buffer.from('dead')] },
      { shard: 2, segId: 6, pos: 0, bufs: [Buffer.from('new')] },
    ]);
    j.close();
    expect(replayJournal(file, dataDir)).toBe(1);
    expect(fs.existsSync(seg(dataDir, 2, 4))).toBe(false);
    expect(fs.readFileSync(seg(dataDir, 2, 6), 'utf8')).toBe('new');
    expect(fs.readFileSync(seg(dataDir, 2, 5), 'utf8')).toBe('live');
  });

  it('is counted without being written back (svc check): the valid records of every journal, up to the first torn one', async () => {
    const dataDir = tempDir('svc-journal-');
    writeSeg(dataDir, 1, 0, Buffer.alloc(0));
    const j0 = SyncJournal.open(journalFile(dataDir, 0));
    await j0.append([{ shard: 1, segId: 0, pos: 0, bufs: [Buffer.from('one')] }, { shard: 1, segId: 0, pos: 3, bufs: [Buffer.from('two')] }]);
    j0.close();
    const j1 = SyncJournal.open(journalFile(dataDir, 1));
    await j1.append([{ shard: 1, segId: 0, pos: 6, bufs: [Buffer.from('three')] }]);
    await j1.append([{ shard: 1, segId: 0, pos: 11, bufs: [Buffer.from('torn')] }]);
    j1.close();
    fs.truncateSync(journalFile(dataDir, 1), fs.statSync(journalFile(dataDir, 1)).size - 2);
    expect(pendingJournalRecords(dataDir)).toBe(3);
    // Read only: the journals and the segment are as they were.
    expect(fs.existsSync(journalFile(dataDir, 0)) && fs.existsSync(journalFile(dataDir, 1))).toBe(true);
    expect(fs.statSync(seg(dataDir, 1, 0)).size).toBe(0);
    expect(replayJournals(dataDir)).toBe(3);
    expect(pendingJournalRecords(dataDir)).toBe(0);
  });

  it('is nothing to do without a journal', () => {
    const dataDir = tempDir('svc-journal-');
    expect(replayJournals(dataDir)).toBe(0);
    expect(replayJournal(journalFile(dataDir, 7), dataDir)).toBe(0);
  });
});
