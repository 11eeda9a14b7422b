/**
 * ApiVersions (key 18): the served APIs and their ranges (design/kafka.md, "Versions to
 * advertise"). Versions above 3 are answered by dispatch.ts in v0 with UNSUPPORTED_VERSION.
 * The response always has header v0, even when flexible (KIP-511; messages/index.ts).
 */
import { type ApiVersionsRequest, type ApiVersionsResponse, API_VERSIONS, decodeApiVersionsRequest, encodeApiVersionsResponse } from '../messages/api-versions';
import { type ApiHandler } from '../handler';

export const API_VERSIONS_HANDLER: ApiHandler<ApiVersionsRequest, ApiVersionsResponse> = {
  api: API_VERSIONS,
  decode: decodeApiVersionsRequest,
  encode: encodeApiVersionsResponse,
  handle(ctx) {
    return Promise.resolve({ errorCode: 0, apiKeys: [...ctx.apiVersions], throttleTimeMs: 0 });
  },
};
