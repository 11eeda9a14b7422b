/**
 * The gateway's HTTP engines: uWebSockets.js and node:http behind one contract. They live in
 * src/program/http/, shared with svc-cache; the gateway reaches them through this door.
 */
export * from '../../program/http';
