'use strict';
/** A tiny line buffer with indentation for the emitters: two spaces per level, "\n" endings. */
class Code {
  #lines = [];
  #indent = '';

  line(text) {
    this.#lines.push(text === '' ? '' : this.#indent + text);
  }

  blank() {
    if (this.#lines.length > 0 && this.#lines[this.#lines.length - 1] !== '') this.#lines.push('');
  }

  /** `open`, then `inside()` one level deeper; the caller writes the closing line. */
  block(open, inside) {
    this.line(open);
    const saved = this.#indent;
    this.#indent += '  ';
    inside();
    this.#indent = saved;
  }

  /** Append another buffer's lines at the current indentation. */
  append(other) {
    for (const l of other.lines()) this.line(l);
  }

  lines() {
    return this.#lines.slice();
  }

  toString() {
    return this.#lines.join('\n') + '\n';
  }
}

module.exports = { Code };
