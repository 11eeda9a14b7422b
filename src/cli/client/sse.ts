/**
 * A server-sent events parser (the WHATWG event stream format): bytes in, events out. Lines
 * end in LF, CRLF or CR; `data` lines join with LF; comments (`: keep-alive`) are skipped.
 */
export interface SseEvent {
  event: string;
  id: string | null;
  data: string;
}

export class SseParser {
  #buf = '';
  #event = '';
  #id: string | null = null;
  #data: string[] = [];
  readonly #decoder = new TextDecoder();

  push(chunk: Uint8Array): SseEvent[] {
    this.#buf += this.#decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buf);
      if (m === null) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (m[0] === '\r' && m.index === this.#buf.length - 1) break;
      const line = this.#buf.slice(0, m.index);
      this.#buf = this.#buf.slice(m.index + m[0].length);
      if (line === '') {
        if (this.#data.length > 0 || this.#event !== '') out.push({ event: this.#event || 'message', id: this.#id, data: this.#data.join('\n') });
        this.#event = '';
        this.#id = null;
        this.#data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.#event = value;
      else if (field === 'data') this.#data.push(value);
      else if (field === 'id') this.#id = value;
    }
    return out;
  }
}
