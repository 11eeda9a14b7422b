/** Tokens, scopes and what they allow. */
export { ANONYMOUS, type AuthFailure, type Authenticator, type Principal, type TokenRecord, TokenReplica, Tokens, type VersionedToken } from './tokens';
export { AUDIENCES, type Audience, type Group, type Matcher, OPS, type Op, ROOT_SCOPE, type Scope, scopeErrors } from './scope';
export { type Access, denial, tenantPrefix, widening } from './scope-rules';
export { parseWireToken } from './wire-token';
