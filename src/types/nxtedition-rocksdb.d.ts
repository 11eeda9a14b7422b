// The package ships no typings; rocks-store.ts describes the part it uses.
declare module '@nxtedition/rocksdb' {
  export const RocksLevel: unknown;
}
