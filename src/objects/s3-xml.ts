/**
 * The two S3 XML answers the store reads: ListObjectsV2 results and <Error>. Their shapes are
 * fixed and flat, so a few patterns read them (the node carries no XML parser; svc-cache's is
 * its own program's). Text is unescaped (the five entities and numeric references).
 */

export interface ListPage {
  contents: Array<{ key: string; size: number }>;
  truncated: boolean;
  nextToken: string | null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function xmlUnescape(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_m, e: string) =>
    e.startsWith('#x') ? String.fromCodePoint(parseInt(e.slice(2), 16)) : e.startsWith('#') ? String.fromCodePoint(parseInt(e.slice(1), 10)) : ENTITIES[e]!,
  );
}

function element(xml: string, name: string): string | null {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m === null ? null : xmlUnescape(m[1]!);
}

/** A ListObjectsV2 result, or null when the text is not one. */
export function parseListPage(xml: string): ListPage | null {
  if (!/<ListBucketResult[\s>]/.test(xml)) return null;
  const contents: ListPage['contents'] = [];
  for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const key = element(m[1]!, 'Key');
    const size = Number(element(m[1]!, 'Size'));
    if (key === null || !Number.isSafeInteger(size)) return null;
    contents.push({ key, size });
  }
  return { contents, truncated: element(xml, 'IsTruncated') === 'true', nextToken: element(xml, 'NextContinuationToken') };
}

/** An <Error> answer's code and message, or null when the body is not one. */
export function parseError(xml: string): { code: string; message: string } | null {
  if (!/<Error[\s>]/.test(xml)) return null;
  const code = element(xml, 'Code');
  return code === null ? null : { code, message: element(xml, 'Message') ?? '' };
}
