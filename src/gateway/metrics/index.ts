/** Prometheus metrics of the node (docs/metrics.md). */
export { type MetricSources, NodeMetrics } from './node-metrics';
export { type GatewayFigures, type HttpListener, HTTP_OPS, RequestCounts } from './request-counts';
export { metered } from './metered';
export { traced } from './traced';
