/** The config loader: a schema drives flags, environment and TOML; every problem is reported at once. */
export { defineConfig, standardFromText, type ConfigLoader, type ConfigSpec, type InvalidValue, type Loaded } from './load';
export { camelWords, enumSchema, hostPortSchema, type ConfigField, type FieldKind, type Naming } from './fields';
export { type Entry, type EnvStyle, type Source, type SourceProblem } from './sources';
export { type SchemaProblem } from './validators';
