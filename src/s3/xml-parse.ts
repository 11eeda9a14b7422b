/**
 * Parses the small XML request bodies svc-cache must understand (DeleteObjects). The only
 * file that imports fast-xml-parser. `htmlEntities` matters: keys like `a&#13;b` must be
 * decoded, or the wrong key is invalidated.
 */
import { XMLParser } from 'fast-xml-parser';

const parser = new XMLParser({ htmlEntities: true, processEntities: true, parseTagValue: false, trimValues: false, ignoreAttributes: true, isArray: (name) => name === 'Object' });

/** Keys named by a DeleteObjects body (`<Delete><Object><Key>…`), or undefined if it is not one. */
export function deleteObjectsKeys(xml: string): string[] | undefined {
  let doc: unknown;
  try {
    doc = parser.parse(xml, true);
  } catch {
    return undefined;
  }
  const del = (doc as { Delete?: { Object?: { Key?: unknown }[] } }).Delete;
  if (del === undefined || typeof del !== 'object') return undefined;
  const keys: string[] = [];
  for (const o of del.Object ?? []) if (typeof o.Key === 'string' || typeof o.Key === 'number') keys.push(String(o.Key));
  return keys;
}
