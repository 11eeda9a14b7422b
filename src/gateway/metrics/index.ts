/** Prometheus metrics of the node (docs/metrics.md). */
export { type HttpListener, type MetricSources, HTTP_OPS, NodeMetrics } from './node-metrics';
export { metered } from './metered';
export { traced } from './traced';
