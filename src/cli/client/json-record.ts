/** What `read` and `tail` get from the node, one object per record. */

/** A record in the node's JSON read format (docs/protocol.md, "Read"). */
export interface JsonRecord {
  seq: number;
  timestamp: number;
  key?: string;
  key_b64?: string;
  headers?: Record<string, string>;
  headers_b64?: Record<string, string>;
  /** null: a tombstone (a Kafka record with a null value). */
  body?: string | null;
  body_b64?: string;
}
