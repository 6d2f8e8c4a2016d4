// A plugins.toml with one observability component writing ATOF (file sink,
// overwrite unless said) and plugin-managed ATIF, for tests of the plugin's plugins.toml
// path. `extraToml` is appended (e.g. another [[components]] entry).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { JsonObject } from '../../src/relay/contract.ts';

export interface ObservabilityTomlOptions {
  atofDir: string;
  atifDir: string;
  /** The ATOF file sink's mode: `overwrite` unless said. */
  atofMode?: 'append' | 'overwrite';
  /** Appended after the ATIF table (keys there belong to it). */
  extraToml?: string;
}

export function writeObservabilityToml(dir: string, options: ObservabilityTomlOptions): string {
  const file = path.join(dir, 'plugins.toml');
  writeFileSync(
    file,
    `version = 1

[[components]]
kind = "observability"
enabled = true

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"
output_directory = ${JSON.stringify(options.atofDir)}
filename = "events.jsonl"
mode = "${options.atofMode ?? 'overwrite'}"

[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(options.atifDir)}
filename_template = "trajectory-{session_id}.json"
${options.extraToml ?? ''}`,
  );
  return file;
}

/**
 * A plugins.toml document (as an object) with one enabled observability
 * component of config version 4 whose other sections are `sections`.
 */
export function observabilityDocument<Sections extends JsonObject>(sections: Sections) {
  return { version: 1, components: [{ kind: 'observability', enabled: true, config: { version: 4, ...sections } }] };
}
