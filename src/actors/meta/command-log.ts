/**
 * The command log `meta.log`: frames (see frame.ts) of commands (see command.ts), appended by
 * group commit with one write and one fdatasync per group. After a snapshot it is emptied and
 * starts again; on open it is read back, and a torn tail (a write cut by a crash) is truncated at
 * the last valid frame so new commands follow whole ones.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { type MetaCommand, decodeCommand } from './command';
import { syncDir } from './durable-fs';
import { scanFrames } from './frame';

export const LOG_FILE = 'meta.log';

export interface OpenedLog {
  log: CommandLog;
  /** Every whole command in the file, in order. */
  commands: MetaCommand[];
  /** Bytes of torn tail that were cut off (0 when the file ended cleanly). */
  cutBytes: number;
}

export class CommandLog {
  readonly #fh: fsp.FileHandle;
  /** End of the file: where the next group is written. */
  #size: number;
  #commands: number;
  #syncs = 0;

  private constructor(fh: fsp.FileHandle, size: number, commands: number) {
    this.#fh = fh;
    this.#size = size;
    this.#commands = commands;
  }

  static async open(dir: string): Promise<OpenedLog> {
    const file = path.join(dir, LOG_FILE);
    let buf: Buffer | null = null;
    try {
      buf = await fsp.readFile(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    // O_RDWR | O_CREAT: positional writes at #size (O_APPEND would ignore the position).
    const fh = await fsp.open(file, fsp.constants.O_RDWR | fsp.constants.O_CREAT, 0o644);
    try {
      if (buf === null) {
        await syncDir(dir); // the new file's directory entry must survive a crash too
        return { log: new CommandLog(fh, 0, 0), commands: [], cutBytes: 0 };
      }
      const { bodies, end } = scanFrames(buf);
      const commands = bodies.map((b) => decodeCommand(b, file));
      if (end < buf.length) {
        await fh.truncate(end);
        await fh.datasync();
      }
      return { log: new CommandLog(fh, end, commands.length), commands, cutBytes: buf.length - end };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Commands in the file (including any a snapshot already covers). */
  get commands(): number {
    return this.#commands;
  }

  /** fdatasync calls made for groups since open. */
  get syncs(): number {
    return this.#syncs;
  }

  /** Append command frames with one write and one fdatasync. */
  async append(frames: readonly Buffer[]): Promise<void> {
    const buf = frames.length === 1 ? frames[0]! : Buffer.concat(frames);
    for (let done = 0; done < buf.length; ) {
      const { bytesWritten } = await this.#fh.write(buf, done, buf.length - done, this.#size + done);
      done += bytesWritten;
    }
    this.#syncs++;
    await this.#fh.datasync();
    this.#size += buf.length;
    this.#commands += frames.length;
  }

  /** Empty the log once a snapshot holds everything in it. */
  async reset(): Promise<void> {
    await this.#fh.truncate(0);
    await this.#fh.datasync();
    this.#size = 0;
    this.#commands = 0;
  }

  async close(): Promise<void> {
    await this.#fh.close();
  }
}
