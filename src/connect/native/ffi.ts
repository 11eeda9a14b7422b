/**
 * The C ABI of sdk/svc_connector.h through koffi. The only file of svc-connectors that imports
 * koffi (the node's libc calls are util/libc.ts's); it imports nothing else of the project (it runs
 * inside the plugin host process). Calls are synchronous:
 * in the host process that is what isolation is for; in-process they block the event loop
 * for the length of the call (isolation = "in_process" is for trusted, fast plugins).
 */
import * as koffi from 'koffi';

type Lib = koffi.LibraryHandle;
type Fn = ReturnType<Lib['func']>;

/** The SDK marker this runtime requires (SDK 1.0). */
export const SDK_SYMBOL = 'svc_connector_sdk_v1_0';

export type NativeLog = (id: number, level: number, msg: string) => void;

export interface NativeSink {
  open(id: number, config: Buffer): number;
  write(id: number, batch: Buffer, results: Buffer, count: number): number;
  flush(id: number): number;
  close(id: number): number;
  lastError(id: number): string;
}

export interface NativeSource {
  open(id: number, config: Buffer, state: Buffer): number;
  /** Returns the poll code; `outLen[0]` receives the length written or needed. */
  poll(id: number, out: Buffer, outLen: Uint32Array, maxRecords: number, timeoutMs: number): number;
  commit(id: number, ack: number): number;
  close(id: number): number;
  lastError(id: number): string;
}

const libs = new Map<string, Lib>();
let LogFn: koffi.TypeObject | null = null;
let logCallback: bigint | null = null;

function open(file: string, log: NativeLog): Lib {
  let lib = libs.get(file);
  if (lib === undefined) {
    lib = koffi.load(file);
    libs.set(file, lib);
  }
  try {
    lib.func(`void ${SDK_SYMBOL}(void)`);
  } catch (err) {
    throw new Error(`${file}: symbol ${SDK_SYMBOL} not found (${(err as Error).message}): the plugin was built against another SDK than this runtime's (SDK 1.0, svc_connector.h); rebuild it with this release's header`, { cause: err });
  }
  if (LogFn === null) LogFn = koffi.proto('void svc_log_fn(uint32_t id, int32_t level, const char *msg)');
  if (logCallback === null) logCallback = koffi.register((id: number, level: number, msg: string) => log(id, level, msg), koffi.pointer(LogFn));
  return lib;
}

function fn(lib: Lib, file: string, decl: string): Fn {
  try {
    return lib.func(decl);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
}

function lastErrorOf(lib: Lib, file: string): (id: number) => string {
  const f = fn(lib, file, 'uint32_t svc_last_error(uint32_t id, _Out_ uint8_t *buf, uint32_t cap)');
  return (id) => {
    const buf = Buffer.alloc(1024);
    const n = f(id, buf, buf.length) as number;
    return buf.subarray(0, Math.min(n, buf.length)).toString('utf8');
  };
}

export function loadNativeSink(file: string, log: NativeLog): NativeSink {
  const lib = open(file, log);
  const o = fn(lib, file, 'int32_t svc_sink_open(uint32_t id, const uint8_t *config, uint32_t config_len, svc_log_fn *log)');
  const w = fn(lib, file, 'int32_t svc_sink_write(uint32_t id, const uint8_t *batch, uint32_t batch_len, _Out_ uint8_t *results, uint32_t count)');
  const f = fn(lib, file, 'int32_t svc_sink_flush(uint32_t id)');
  const c = fn(lib, file, 'int32_t svc_sink_close(uint32_t id)');
  return {
    open: (id, config) => o(id, config, config.length, logCallback) as number,
    write: (id, batch, results, count) => w(id, batch, batch.length, results, count) as number,
    flush: (id) => f(id) as number,
    close: (id) => c(id) as number,
    lastError: lastErrorOf(lib, file),
  };
}

export function loadNativeSource(file: string, log: NativeLog): NativeSource {
  const lib = open(file, log);
  const o = fn(lib, file, 'int32_t svc_source_open(uint32_t id, const uint8_t *config, uint32_t config_len, const uint8_t *state, uint32_t state_len, svc_log_fn *log)');
  const p = fn(lib, file, 'int32_t svc_source_poll(uint32_t id, _Out_ uint8_t *out, uint32_t cap, _Out_ uint32_t *out_len, uint32_t max_records, uint32_t timeout_ms)');
  const cm = fn(lib, file, 'int32_t svc_source_commit(uint32_t id, int32_t ack)');
  const c = fn(lib, file, 'int32_t svc_source_close(uint32_t id)');
  return {
    open: (id, config, state) => o(id, config, config.length, state, state.length, logCallback) as number,
    poll: (id, out, outLen, max, timeout) => p(id, out, out.length, outLen, max, timeout) as number,
    commit: (id, ack) => cm(id, ack) as number,
    close: (id) => c(id) as number,
    lastError: lastErrorOf(lib, file),
  };
}
