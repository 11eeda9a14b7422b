/**
 * Single byte ranges, as S3 answers them. Anything that is not one well-formed range
 * (multiple ranges, other units, `a-b` with a > b) is ignored and the whole object served;
 * a well-formed range that starts past the end (or any range of an empty object, or
 * `bytes=-0`) is unsatisfiable: 416 with `Content-Range: bytes * /<size>`.
 */
export type RangeResult = { kind: 'none' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'none' };
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return { kind: 'range', start, end };
}
