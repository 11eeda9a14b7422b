/**
 * Subscription patterns: globs over `/`-separated stream paths. `*` matches exactly one
 * segment, `**` zero or more segments, anything else matches a segment literally.
 */

const segments = (path: string): string[] => path.split('/').filter((s) => s.length > 0);

export function globMatch(pattern: string, path: string): boolean {
  return matchFrom(segments(pattern), 0, segments(path), 0);
}

function matchFrom(pat: string[], pi: number, path: string[], si: number): boolean {
  for (; pi < pat.length; pi++, si++) {
    const seg = pat[pi];
    if (seg === '**') {
      for (let k = si; k <= path.length; k++) if (matchFrom(pat, pi + 1, path, k)) return true;
      return false;
    }
    if (si >= path.length) return false;
    if (seg !== '*' && seg !== path[si]) return false;
  }
  return si === path.length;
}

/**
 * The literal leading segments of a pattern, to narrow a listing: `events/` for `events/*`,
 * `events/a` for a pattern without wildcards, `''` for `**`.
 */
export function literalPrefix(pattern: string): string {
  const all = segments(pattern);
  const wild = all.findIndex((seg) => seg === '*' || seg === '**');
  if (wild < 0) return all.join('/');
  return wild === 0 ? '' : `${all.slice(0, wild).join('/')}/`;
}
