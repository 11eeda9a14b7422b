/**
 * Secrets are never shown: wherever config or a plugin_config is logged or served by the API,
 * values under keys that name a secret are replaced. Spec: "GET .../configs/plugin — active
 * plugin_config with secrets redacted"; the brief: secrets redacted wherever config is shown.
 */
export const REDACTED = '***';
const SECRET_KEY = /(pass(word)?|secret|token|api_?key|credential|private_?key|auth)/i;

/** A deep copy of `v` with secret-named keys' values replaced, and passwords inside URLs hidden. */
export function redact(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(redact);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[k] = SECRET_KEY.test(k) && x !== '' && x !== null && x !== undefined && typeof x !== 'object' ? REDACTED : redact(x);
    }
    return out;
  }
  if (typeof v === 'string') return v.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:)[^@\s]+@/i, `$1${REDACTED}@`);
  return v;
}
