// A `header_env` variable the runtime refused to read (Deno without
// --allow-env) is reported as refused, with what to run, not as "not set …
// fix: set ATOF_TOKEN": a user trial had the variable set and was sent to set
// it again. The real case runs on Deno, in a child process without
// --allow-env; on every runtime an environment whose reads throw stands in.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfigDiagnostic } from '../../src/formats/plugins-toml/diagnostic.ts';
import { openTelemetrySettings } from '../../src/formats/plugins-toml/opentelemetry.ts';
import { validateStorageEntry, validateStreamSink } from '../../src/formats/plugins-toml/sinks.ts';
import { guardEnv, readVariable } from '../../src/shared/env.ts';
import { dist, runChild, runtime } from '../support/child.ts';
import { refusingEnv } from '../support/refusing-env.ts';

const PLUGINS_TOML = `version = 1
[[components]]
kind = "observability"
[components.config]
version = 4
[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "file"
output_directory = "out"
filename = "events.jsonl"
[[components.config.atof.sinks]]
type = "stream"
url = "http://127.0.0.1:9/post"
header_env = { Authorization = "ATOF_TOKEN" }
[components.config.atif]
enabled = true
output_directory = "out"
[[components.config.atif.storage]]
type = "http"
endpoint = "http://127.0.0.1:9/upload"
header_env = { Authorization = "ATIF_TOKEN" }
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://127.0.0.1:9"
header_env = { Authorization = "OTEL_TOKEN" }
`;

const REFUSED = /could not be read: the runtime refused to read (ATOF|ATIF|OTEL)_TOKEN \(NotCapable: .*; Deno: run with --allow-env\)/;

describe('a header_env variable the runtime refused to read', () => {
  it('is said to be refused, not unset, by the stream sink, storage and OTLP checks (an environment whose reads throw)', () => {
    const env = guardEnv(refusingEnv());
    const found: string[] = [];
    const unsupported = (_component: string, _field: string, message: string) => found.push(message);
    const read = (name: string) => readVariable(env, name);
    validateStreamSink({ type: 'stream', url: 'http://127.0.0.1:9/post', header_env: { Authorization: 'ATOF_TOKEN' } }, 1, new Set(), unsupported, read);
    validateStorageEntry({ type: 'http', endpoint: 'http://127.0.0.1:9/upload', header_env: { Authorization: 'ATIF_TOKEN' } }, 0, unsupported, read);
    openTelemetrySettings({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:9', header_env: { Authorization: 'OTEL_TOKEN' } }] }, 4, env, (d: ConfigDiagnostic) => found.push(d.message));
    expect(found).toHaveLength(3);
    for (const message of found) {
      expect(message).toMatch(REFUSED);
      expect(message).not.toMatch(/not set|fix: set/);
    }
    // An unset variable in an environment that can be read is still "not set".
    expect(readVariable(guardEnv({}), 'ATOF_TOKEN')).toEqual({ value: undefined });
  });

  it.skipIf(runtime !== 'deno')('Deno without --allow-env, the variables set: each destination is skipped as refused (child process)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-header-env-'));
    fs.writeFileSync(path.join(dir, 'plugins.toml'), PLUGINS_TOML);
    const child = runChild(
      `import { createNemoRelayPlugin } from ${dist('src/index.js')};
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const plugin = createNemoRelayPlugin({ backend: 'memory', settings: { pluginsTomlPath: 'plugins.toml' }, logger: quiet });
await plugin.ready;
const diagnostics = plugin.status().pluginConfig.diagnostics;
await plugin.shutdown({ timeoutMs: 5000 });
console.log('@@' + JSON.stringify(diagnostics.filter((d) => /header_env/.test(d.field ?? ''))));`,
      { cwd: dir, denoPermissions: ['--allow-read', '--allow-write'], env: { ATOF_TOKEN: 'atof-secret', ATIF_TOKEN: 'atif-secret', OTEL_TOKEN: 'otel-secret' } },
    );
    expect(child.status, child.stderr).toBe(0);
    const diagnostics = JSON.parse(child.stdout.split('@@')[1]!) as ConfigDiagnostic[];
    expect(diagnostics.map((d) => d.field).sort()).toEqual(['endpoints[0].header_env.Authorization', 'sinks[1].header_env.Authorization', 'storage[0].header_env.Authorization']);
    for (const diagnostic of diagnostics) {
      expect(diagnostic.message).toMatch(REFUSED);
      expect(diagnostic.message).not.toMatch(/not set|fix: set/);
      expect(diagnostic.message).not.toContain('secret');
    }
  });
  if (runtime !== 'deno') console.info('[header-env-refused] the Deno child without --allow-env runs only when the suite runs on Deno');
});
