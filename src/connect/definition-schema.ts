/**
 * A connector definition (spec "Connector definition"): one TOML file per connector. The spec
 * names `path`, `enabled`, `plugin_config`, `version` and the topics blocks; every other field
 * here is ours and documented in docs/connectors.md ("Definition fields").
 */
import { type Static, Type as T } from '@sinclair/typebox';

const Strict = { additionalProperties: false } as const;
const Duration = (d: string) => T.Union([T.String(), T.Number({ minimum: 0 })], { default: d });

/** One transform, applied in order to JSON records (src/connect/transforms.ts). */
export const TransformSchema = T.Union([
  T.Object({ type: T.Literal('add_fields'), fields: T.Record(T.String(), T.Unknown()) }, Strict),
  T.Object({ type: T.Literal('delete_fields'), fields: T.Array(T.String()) }, Strict),
  T.Object({ type: T.Literal('update_fields'), fields: T.Record(T.String(), T.Unknown()) }, Strict),
  T.Object({ type: T.Literal('rename_fields'), fields: T.Record(T.String(), T.String()) }, Strict),
  T.Object(
    {
      type: T.Literal('filter'),
      field: T.String(),
      /** Keep records whose field equals one of `equals`, or (with `exists`) that have/lack it. */
      equals: T.Optional(T.Array(T.Unknown())),
      exists: T.Optional(T.Boolean()),
      /** `keep` (default): matching records stay; `drop`: matching records go. */
      action: T.Union([T.Literal('keep'), T.Literal('drop')], { default: 'keep' }),
    },
    Strict,
  ),
]);
export type Transform = Static<typeof TransformSchema>;

/** A sink's topics block: the topics it consumes (names, or a pattern anchored at the start). */
export const SinkTopicsSchema = T.Object(
  {
    names: T.Array(T.String({ minLength: 1 }), { default: [] }),
    pattern: T.String({ default: '' }),
    /** Where a group with no committed offset starts. */
    start: T.Union([T.Literal('earliest'), T.Literal('latest')], { default: 'earliest' }),
  },
  Strict,
);

/** A source's topics block: the topic its records are produced to. */
export const SourceTopicsSchema = T.Object({ name: T.String({ minLength: 1 }), partition: T.Optional(T.Integer({ minimum: 0 })) }, Strict);

export const DefinitionSchema = T.Object(
  {
    type: T.Union([T.Literal('sink'), T.Literal('source')]),
    /** The connector's key: API path, consumer group suffix, state file name. */
    key: T.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' }),
    name: T.String({ default: '' }),
    /** Plugin: an absolute path, or a library name without extension (search order in docs). */
    path: T.String({ minLength: 1 }),
    enabled: T.Boolean({ default: true }),
    version: T.Integer({ minimum: 0, default: 0 }),
    topics: T.Array(T.Union([SinkTopicsSchema, SourceTopicsSchema]), { default: [] }),
    plugin_config: T.Record(T.String(), T.Unknown(), { default: {} }),
    transforms: T.Array(TransformSchema, { default: [] }),
    batch: T.Object(
      {
        /**
         * Most records per plugin call; a sink flushes and commits once per chunk of this size, so
         * it is also the duplicate bound after a crash. 5000 was chosen by measurement
         * (perf/connect/RESULTS.md): at 1000 the fdatasync and commit round trips cost half the
         * throughput of a bare consumer; at 5000 the file sink keeps its pace.
         */
        max_records: T.Integer({ minimum: 1, maximum: 100_000, default: 5000 }),
        /** Source: how long poll() may wait for data. Sink: fetch wait. */
        poll_interval: Duration('100ms'),
      },
      { ...Strict, default: {} },
    ),
    error: T.Object(
      {
        /** Attempts for a retryable record (sink) or a failed produce (source), the first included. */
        max_attempts: T.Integer({ minimum: 1, default: 5 }),
        initial_backoff: Duration('100ms'),
        max_backoff: Duration('5s'),
        /** `none`: a record that stays failed stops the connector (status error, nothing committed past it). `dlq`: it goes to `dlq_topic`. */
        tolerance: T.Union([T.Literal('none'), T.Literal('dlq')], { default: 'none' }),
        dlq_topic: T.String({ default: '' }),
      },
      { ...Strict, default: {} },
    ),
    /** Per plugin call; a call that takes longer fails the connector (native plugins are killed). */
    plugin_timeout: Duration('30s'),
    /**
     * Native plugins: `process` (default, a supervised child) or `in_process`. JS modules given
     * by path: `process` (default) runs them in their own worker thread; `in_process` in the
     * runtime's thread. Built-in plugins always run in the runtime's thread.
     */
    isolation: T.Union([T.Literal('process'), T.Literal('in_process')], { default: 'process' }),
    /** JS modules in a worker thread: the worker's heap limit in MiB (V8 old generation). */
    memory_limit_mb: T.Integer({ minimum: 16, maximum: 65_536, default: 256 }),
  },
  Strict,
);
export type Definition = Static<typeof DefinitionSchema>;
export type SinkTopics = Static<typeof SinkTopicsSchema>;
export type SourceTopics = Static<typeof SourceTopicsSchema>;
