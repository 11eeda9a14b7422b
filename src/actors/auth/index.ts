/** Tokens, scopes and what they allow. */
export { ANONYMOUS, type AuthFailure, type Principal, type TokenRecord, Tokens } from './tokens';
export { AUDIENCES, type Audience, type Group, type Matcher, OPS, type Op, ROOT_SCOPE, type Scope, scopeErrors } from './scope';
export { type Access, denial, tenantPrefix, widening } from './scope-rules';
export { parseWireToken } from './wire-token';
