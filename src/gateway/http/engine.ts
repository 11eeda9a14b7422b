/** The engine contract (src/program/http/engine.ts), as the gateway's handlers import it. */
export * from '../../program/http/engine';
