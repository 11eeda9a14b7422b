/** XML text escaping for the bodies svc-cache writes itself (errors only). */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' };

export function xmlEscape(s: string): string {
  return s.replace(/[&<>"'\r]/g, (c) => ENTITIES[c] ?? c);
}
