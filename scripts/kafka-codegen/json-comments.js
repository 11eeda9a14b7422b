'use strict';
/**
 * Kafka's message schemas are JSON with `//` line comments. Strip the comments outside
 * string literals (an `about` text may contain "//", e.g. in a URL) and parse.
 */
function parseJsonWithComments(text, file) {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  try {
    return JSON.parse(out);
  } catch (err) {
    throw new Error(`${file}: ${err.message}`, { cause: err });
  }
}

module.exports = { parseJsonWithComments };
