/**
 * One finding about a `plugins.toml` document or a setting: the shape every
 * validator, backend and the CLI's `doctor` report in.
 *
 * @module
 */

export interface ConfigDiagnostic {
  /** `error` rejects the document; `warning` does not. */
  level: 'warning' | 'error';
  /** A stable code, e.g. `observability.unsupported_value`. */
  code: string;
  /** The component the problem is in, e.g. `observability`. */
  component?: string;
  /** The field, e.g. `atof sinks[0].mode`. */
  field?: string;
  /** What is wrong, in one sentence. */
  message: string;
}
