/**
 * One finding about a `plugins.toml` document or a setting: the shape every
 * validator, backend and the CLI's `doctor` report in.
 *
 * @module
 */

export interface ConfigDiagnostic {
  level: 'warning' | 'error';
  code: string;
  component?: string;
  field?: string;
  message: string;
}
