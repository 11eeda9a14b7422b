/**
 * Transforms on JSON records, applied in the order the definition lists them: add_fields,
 * delete_fields, update_fields (only fields that exist), rename_fields, filter. A record whose
 * value is not a JSON object passes unchanged (transforms only apply to JSON records); a record
 * a filter drops is counted in svc_connector_messages_filtered_total.
 */
import type { Transform } from './definition-schema';

/** Applies `ts` to one value; null = dropped by a filter. */
export function applyTransforms(ts: readonly Transform[], value: Buffer): Buffer | null {
  if (ts.length === 0) return value;
  let obj: unknown;
  try {
    obj = JSON.parse(value.toString('utf8'));
  } catch {
    return value;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return value;
  const o = obj as Record<string, unknown>;
  for (const t of ts) {
    switch (t.type) {
      case 'add_fields':
        for (const [k, v] of Object.entries(t.fields)) if (!(k in o)) o[k] = v;
        break;
      case 'delete_fields':
        for (const k of t.fields) delete o[k];
        break;
      case 'update_fields':
        for (const [k, v] of Object.entries(t.fields)) if (k in o) o[k] = v;
        break;
      case 'rename_fields':
        for (const [from, to] of Object.entries(t.fields)) {
          if (from in o) {
            o[to] = o[from];
            delete o[from];
          }
        }
        break;
      case 'filter': {
        const has = t.field in o;
        const matches = t.exists !== undefined ? has === t.exists : has && (t.equals ?? []).some((e) => JSON.stringify(e) === JSON.stringify(o[t.field]));
        if ((t.action ?? 'keep') === 'keep' ? !matches : matches) return null;
        break;
      }
    }
  }
  return Buffer.from(JSON.stringify(o));
}
