/** The canonical request and string to sign of SigV4 (AWS General Reference, "Create a canonical request"). */
import { ALGORITHM, sha256Hex } from './signing-key';

/**
 * Header values by lower-case name, each value trimmed with runs of spaces collapsed; repeated
 * headers joined with `,`. Built from Node's `rawHeaders` so repeats are seen as sent.
 */
export function headerValues(rawHeaders: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const raw = rawHeaders[i + 1]!.trim();
    const value = raw.includes('  ') ? raw.replace(/ {2,}/g, ' ') : raw;
    const prev = out.get(name);
    out.set(name, prev === undefined ? value : prev + ',' + value);
  }
  return out;
}

export function canonicalRequest(
  method: string,
  canonicalUri: string,
  canonicalQuery: string,
  headers: ReadonlyMap<string, string>,
  signedHeaders: readonly string[],
  payloadHash: string,
): string {
  let canonicalHeaders = '';
  for (const h of signedHeaders) canonicalHeaders += `${h}:${headers.get(h) ?? ''}\n`;
  return `${method}\n${canonicalUri}\n${canonicalQuery}\n${canonicalHeaders}\n${signedHeaders.join(';')}\n${payloadHash}`;
}

export function stringToSign(amzDate: string, scope: string, canonical: string): string {
  return `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`;
}

/** `20130524T000000Z` → milliseconds, or NaN. */
export function parseAmzDate(s: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/** milliseconds → `20130524T000000Z`. */
export function formatAmzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}
