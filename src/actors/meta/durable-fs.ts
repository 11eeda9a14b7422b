/** File-system steps that make metadata changes survive a crash. */
import * as fsp from 'node:fs/promises';

/**
 * fsync a directory, so a file created or renamed in it stays after a crash. Some file systems
 * refuse to open a directory for sync; there the entry is as durable as they make it.
 */
export async function syncDir(dir: string): Promise<void> {
  let d: fsp.FileHandle;
  try {
    d = await fsp.open(dir, 'r');
  } catch {
    return;
  }
  try {
    await d.sync();
  } catch {
    // best effort (see above)
  } finally {
    await d.close();
  }
}
