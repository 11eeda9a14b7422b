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
  /** `signedHeaders` joined with `;`, when the caller holds it already (the verifier: as sent). */
  signedHeadersText = signedHeaders.join(';'),
): string {
  let canonicalHeaders = '';
  for (let i = 0; i < signedHeaders.length; i++) {
    const h = signedHeaders[i]!;
    canonicalHeaders += h + ':' + (headers.get(h) ?? '') + '\n';
  }
  return method + '\n' + canonicalUri + '\n' + canonicalQuery + '\n' + canonicalHeaders + '\n' + signedHeadersText + '\n' + payloadHash;
}

export function stringToSign(amzDate: string, scope: string, canonical: string): string {
  return `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`;
}

/** The value of `n` ASCII digits of `s` from `at`, or NaN when one of them is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return v;
}

/** `20130524T000000Z` → milliseconds, or NaN. Read char by char: it runs on every verification. */
export function parseAmzDate(s: string): number {
  if (s.length !== 16 || s.charCodeAt(8) !== 84 /* T */ || s.charCodeAt(15) !== 90 /* Z */) return NaN;
  // NaN in any field makes Date.UTC NaN.
  return Date.UTC(digits(s, 0, 4), digits(s, 4, 2) - 1, digits(s, 6, 2), digits(s, 9, 2), digits(s, 11, 2), digits(s, 13, 2));
}

/** milliseconds → `20130524T000000Z`. */
export function formatAmzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}
