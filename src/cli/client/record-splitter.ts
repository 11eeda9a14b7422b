/**
 * Splits a byte stream into records: one per line (`\n`, a trailing `\r` dropped), one per
 * NUL byte, or length-prefixed (a 4-byte big-endian length before each record, the framing
 * of kcat's and most tools' binary pipes). A last line without its newline is a record; a
 * length-prefixed input that ends inside a record is an error (it was cut).
 */
export type Framing = 'line' | 'nul' | 'length';

export class RecordSplitter {
  #rest: Buffer = Buffer.alloc(0);

  constructor(readonly framing: Framing) {}

  /** Records completed by this chunk. */
  push(chunk: Buffer): Buffer[] {
    const buf = this.#rest.length === 0 ? chunk : Buffer.concat([this.#rest, chunk]);
    const out: Buffer[] = [];
    let pos = 0;
    if (this.framing === 'length') {
      while (buf.length - pos >= 4) {
        const len = buf.readUInt32BE(pos);
        if (buf.length - pos - 4 < len) break;
        out.push(buf.subarray(pos + 4, pos + 4 + len));
        pos += 4 + len;
      }
    } else {
      const sep = this.framing === 'line' ? 0x0a : 0x00;
      for (let i = buf.indexOf(sep, pos); i >= 0; i = buf.indexOf(sep, pos)) {
        let end = i;
        if (this.framing === 'line' && end > pos && buf[end - 1] === 0x0d) end--;
        out.push(buf.subarray(pos, end));
        pos = i + 1;
      }
    }
    // Copy the remainder so the chunk it came from can be freed.
    this.#rest = Buffer.from(buf.subarray(pos));
    return out;
  }

  /** The record left at the end of input, if any. */
  end(): Buffer | null {
    const rest = this.#rest;
    this.#rest = Buffer.alloc(0);
    if (rest.length === 0) return null;
    if (this.framing === 'length') throw new Error(`input ends inside a length-prefixed record (${rest.length} bytes left over)`);
    return rest;
  }
}
