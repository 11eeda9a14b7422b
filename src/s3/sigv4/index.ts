/** SigV4 for svc-cache: verifying clients, signing toward the origin, aws-chunked bodies. */
export { headerValues, formatAmzDate, parseAmzDate } from './canonical';
export { AwsChunkedDecoder, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER, type ChunkSigning } from './chunked';
export { canonicalUri, parseQuery, uriDecode, uriEncode, canonicalQuery } from './encoding';
export { signOutgoing, presignUrl, type Credentials, type OutgoingRequest } from './signer';
export { SigningKeyCache, sha256Hex, EMPTY_SHA256 } from './signing-key';
export { SigV4Verifier, MAX_SKEW_MS, MAX_PRESIGNED_SECONDS, type Verified, type SignedRequest, type SecretLookup } from './verifier';
