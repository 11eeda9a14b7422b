/**
 * Messages between the runtime and a native plugin's host process (child_process.fork with
 * advanced serialization, so buffers cross as bytes). One declared request per operation and
 * one reply shape; the host runs one request at a time.
 */
export type HostRequest =
  | { op: 'sink.load'; file: string }
  | { op: 'sink.open'; id: number; config: Uint8Array }
  | { op: 'sink.write'; id: number; batch: Uint8Array; count: number }
  | { op: 'sink.flush'; id: number }
  | { op: 'sink.close'; id: number }
  | { op: 'source.load'; file: string }
  | { op: 'source.open'; id: number; config: Uint8Array; state: Uint8Array }
  | { op: 'source.poll'; id: number; max: number; timeoutMs: number }
  | { op: 'source.commit'; id: number; ack: boolean }
  | { op: 'source.close'; id: number };

/** What each operation answers with when it succeeds. */
export interface HostResults {
  'sink.load': null;
  'sink.open': null;
  /** One status byte per record. */
  'sink.write': Uint8Array;
  'sink.flush': null;
  'sink.close': null;
  'source.load': null;
  'source.open': null;
  /** A source batch in the SDK layout, or null for no data. */
  'source.poll': Uint8Array | null;
  'source.commit': null;
  'source.close': null;
}

export type HostMessage = { call: number; ok: true; value: unknown } | { call: number; ok: false; message: string } | { log: { id: number; level: number; msg: string } };

export type Envelope = { call: number } & HostRequest;
