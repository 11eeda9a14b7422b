/** Reading a node's Prometheus exposition text (GET /metrics) in tests. */

/** One sample of the exposition text: `name{labels} value`, labels as written (sorted by the client library); null when absent. */
export function sample(text: string, name: string, labels = ''): number | null {
  const want = labels === '' ? name : `${name}{${labels}}`;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    if (line.slice(0, sp) === want) return Number(line.slice(sp + 1));
  }
  return null;
}
