/**
 * Program plumbing shared by svc, svc-cache and svc-connectors (src/program/README.md): the
 * config loader, the logger interface, host:port parsing and TOML files. A leaf: it imports
 * nothing from other src folders, so every program may import it.
 */
export * from './config';
export { logArgs, type LogBindings, type LogDestination, type LogFn, type Logger } from './logger';
export { formatHostPort, HOST_PORT_FORM, isLoopback, parseHostPort, type HostPort, type HostPortResult } from './host-port';
export { describeTomlProblem, parseToml, readTomlFile, stringifyToml, type TomlProblem, type TomlResult, type TomlTable } from './toml';
