/** A response that forwards to another (src/program/http/forwarding-response.ts), for the gateway's wrappers. */
export * from '../../program/http/forwarding-response';
