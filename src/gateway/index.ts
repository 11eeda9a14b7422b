/**
 * The gateway's front door: what the composition root (src/node.ts) starts and wires — the HTTP
 * engines, the Svc, Durable Streams and admin listeners, the layers around every listener's
 * handler (metrics, CORS, shield, auth guard) and the live-read registry. The Kafka edge takes the
 * registry's types from here (type-only imports; the instance is passed in by src/node.ts).
 *
 *   engine ──▶ metered ──▶ [traced] ──▶ requestLog ──▶ CORS ──▶ shield ──▶ auth guard ──▶ listener handler (svc/, ds/, admin/)
 *                                                                      │
 *                                                     kit/ (parsing, replies, live waiting)
 */
export { type EngineLoadLog, type HeaderList, type HttpRequest, type HttpResponse, type HttpServerHandle, type RequestHandler, loadHttpEngine } from './http';
export { createSvcHandler } from './svc/svc-handler';
export { SVC_CORS } from './svc/svc-cors';
export { type DsContext, DS_CORS, STREAM_BASE, SUBSCRIPTIONS_PREFIX, Subscriptions, createDsHandler, createSubscriptionHost, dsInternalReply } from './ds';
export { createAdminHandler } from './admin/admin-handler';
export { loadDashboard } from './admin/dashboard';
export { adminInternalReply } from './admin/admin-api';
export { type GroupDoc, type GroupMemberDoc, type GroupOffsetDoc, type GroupsSource, type ShareGroupDoc, type TopicPartitions } from './admin/group-doc';
export { guard } from './auth/guard';
export { InFlight } from './in-flight';
export { type GatewayFigures, NodeMetrics, RequestCounts, metered, traced } from './metrics';
export { shield } from './shield';
export { REQUEST_ID_HEADER, refusalWithId, requestLog } from './request-log';
export { CorsPolicy, FANOUT_LAG_BOUNDS, type LiveReader, LiveWaiters, type StreamWatch, type Waiter, internalReply, parseCorsOrigins, parseStreamName, toHttpError, withCors } from './kit';
export { type ServedChange, ServedStreams, ServedWatch, SharedSchemas, clusterList, ownerCheck, servedHere } from './cluster';
