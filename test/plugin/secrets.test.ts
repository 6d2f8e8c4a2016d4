// Secret tracing (issue 23 items 10 and 11): distinctive values in headers,
// header_env variables, destination URLs (user:password@host) and S3
// credentials are searched for in every byte the library shows or writes:
// status(), the log, the files it wrote, and `doctor` (text and --json).
// The destinations fail (a loopback receiver that answers 500, refused
// ports), so their errors are in status() and the log too.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { HookRegistry } from '../../src/hooks/index.ts';
import { recordingLogger, tempDir } from '../contract/backends.ts';
import { cli } from '../cli/support.ts';
import { displaySettingValue, displayUrl, withoutUrlSecrets } from '../../src/shared/secret-text.ts';
import { withProcessEnv } from '../support/process-env.ts';

const SECRETS = {
  header: 'hdr-SECRET-7f3a',
  headerEnv: 'env-SECRET-91c2',
  urlPassword: 'pw-SECRET-44d0',
  s3Secret: 's3-SECRET-0b6e',
  s3Token: 'tok-SECRET-c5a8',
  otlpEnvHeader: 'otlpenv-SECRET-2e19',
  queryToken: 'qtok-SECRET-83aa',
  // Credentials under query names of their own (OAuth's client_secret, GitLab's private_token, an API gateway's x-api-key).
  clientSecret: 'cs-SECRET-5d21',
  privateToken: 'ptok-SECRET-a90e',
  gatewayKey: 'gwk-SECRET-17bc',
};

let server: http.Server;
let origin: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function pluginsToml(dir: string): string {
  const file = path.join(dir, 'plugins.toml');
  const auth = `user:${SECRETS.urlPassword}@${origin}`;
  fs.writeFileSync(
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
output_directory = ${JSON.stringify(dir)}
filename = "events.jsonl"
[[components.config.atof.sinks]]
type = "stream"
url = "http://${auth}/events?token=${SECRETS.queryToken}"
transport = "http_post"
timeout_millis = 2000
headers = { authorization = "Bearer ${SECRETS.header}" }
[[components.config.atof.sinks]]
type = "stream"
url = "ws://${auth}/ws"
transport = "websocket"
timeout_millis = 2000
header_env = { authorization = "SECRET_TRACE_TOKEN" }
[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(dir)}
filename_template = "trajectory-{session_id}.json"
[[components.config.atif.storage]]
type = "http"
endpoint = "http://${auth}/atif?client_secret=${SECRETS.clientSecret}&private_token=${SECRETS.privateToken}&x-api-key=${SECRETS.gatewayKey}&team=agents"
timeout_millis = 2000
headers = { authorization = "Bearer ${SECRETS.header}" }
[[components.config.atif.storage]]
type = "s3"
bucket = "trace-bucket"
region = "eu-west-3"
endpoint_url = "http://${auth}"
allow_http = true
access_key_id = "AKIDTRACE"
secret_access_key_var = "SECRET_TRACE_S3"
session_token_var = "SECRET_TRACE_S3_TOKEN"
timeout_millis = 2000
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${auth}/v1/traces"
timeout_millis = 2000
scheduled_delay_millis = 10
headers = { authorization = "Bearer ${SECRETS.header}" }
[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://${auth}/other/v1/traces"
timeout_millis = 2000
scheduled_delay_millis = 10
header_env = { authorization = "SECRET_TRACE_TOKEN" }
`,
  );
  return file;
}

const secretEnv = {
  SECRET_TRACE_TOKEN: `Bearer ${SECRETS.headerEnv}`,
  SECRET_TRACE_S3: SECRETS.s3Secret,
  SECRET_TRACE_S3_TOKEN: SECRETS.s3Token,
};

function expectNoSecret(where: string, text: string): void {
  for (const [name, secret] of Object.entries(SECRETS)) {
    expect(text.includes(secret), `${where} shows the ${name} secret:\n${text.slice(Math.max(0, text.indexOf(secret) - 300), text.indexOf(secret) + 100)}`).toBe(false);
  }
}

describe('no secret is printed or written', () => {
  it('status(), the log and the files of a plugin whose every destination fails', async () => {
    // header_env and the *_var settings are read from the process environment.
    withProcessEnv(secretEnv);
    const dir = tempDir('secrets');
    const toml = pluginsToml(dir);
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend: 'memory', logger, env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: toml, ...secretEnv } });
    const hooks = new HookRegistry({ logger });
    plugin.register(hooks);
    await plugin.ready;
    for (const session_id of ['a', 'b']) {
      const ids = { session_id, turn_id: 't1', api_request_id: 'r1' };
      hooks.emit('on_session_start', { session_id, model: 'gpt-4o' });
      hooks.emit('pre_llm_call', { ...ids, user_message: 'hi' });
      hooks.emit('pre_api_request', { ...ids, model: 'gpt-4o', retry_count: 0 });
      hooks.emit('post_api_request', { ...ids, model: 'gpt-4o', response: { usage: { input_tokens: 1, output_tokens: 1 } } });
      hooks.emit('post_llm_call', { ...ids, assistant_response: 'ok' });
      hooks.emit('on_session_end', { session_id, completed: true });
      hooks.emit('on_session_finalize', { session_id });
    }
    await plugin.flush({ timeoutMs: 3000 });
    await plugin.shutdown({ timeoutMs: 3000 });
    const status = plugin.status();
    const kinds = status.outputs.map((o) => o.kind);
    // Every remote kind is there, and they failed: their errors are part of what is searched.
    expect(kinds).toEqual(expect.arrayContaining(['atof-stream', 'atif-storage', 'otlp-traces']));
    expect(status.outputs.filter((o) => o.kind !== 'atof' && o.kind !== 'atif').every((o) => (o.sent ?? 0) === 0)).toBe(true);
    expect(status.outputs.some((o) => (o.lastError ?? '') !== '')).toBe(true);
    expectNoSecret('status()', JSON.stringify(status));
    expectNoSecret('the log', JSON.stringify(logger.lines));
    expect(logger.lines.length).toBeGreaterThan(0);
    for (const name of fs.readdirSync(dir)) {
      if (name === 'plugins.toml') continue;
      expectNoSecret(name, fs.readFileSync(path.join(dir, name), 'utf8'));
    }
  });

  it('doctor, text and --json, with the secrets in the environment and in plugins.toml', () => {
    const dir = tempDir('secrets-doctor');
    const toml = pluginsToml(dir);
    const env = {
      ...secretEnv,
      NEMO_RELAY_HOOKS_OUTPUTS: 'off',
      NEMO_RELAY_HOOKS_PLUGINS_TOML: toml,
    };
    for (const args of [['doctor'], ['doctor', '--json']]) {
      const run = cli(args, { env });
      expectNoSecret(args.join(' '), run.stdout + run.stderr);
    }
    // Without a plugins.toml: OTLP from the environment, with a header list and an endpoint with a password.
    const otlpEnv = {
      NEMO_RELAY_HOOKS_OUTPUTS: 'off',
      NEMO_RELAY_HOOKS_OTLP_ENABLED: '1',
      NEMO_RELAY_HOOKS_OTLP_ENDPOINT: `http://user:${SECRETS.urlPassword}@${origin}`,
      NEMO_RELAY_HOOKS_OTLP_HEADERS: `authorization=Bearer%20${SECRETS.otlpEnvHeader},${SECRETS.otlpEnvHeader}`,
    };
    for (const args of [['doctor'], ['doctor', '--json']]) {
      const run = cli(args, { env: otlpEnv });
      expect(run.stdout).toContain('NEMO_RELAY_HOOKS_OTLP_HEADERS');
      expectNoSecret(args.join(' '), run.stdout + run.stderr);
    }
  });

  it('a headers value written as a string (the OTEL_EXPORTER_OTLP_HEADERS form) is refused without being quoted', async () => {
    // A trial's `headers = "authorization=Bearer ..."` was quoted whole in the refusal: on stderr, in status() and by doctor.
    const dir = tempDir('secrets-headers-string');
    const toml = path.join(dir, 'plugins.toml');
    const sink = ['[[components.config.atof.sinks]]', 'type = "stream"', `url = "http://${origin}/atof"`, 'transport = "http_post"', `headers = "authorization=Bearer ${SECRETS.header}"`];
    const otlp = ['[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "full"', `endpoint = "http://${origin}"`, 'headers = { "x-api-key" = 918273645 }'];
    const head = ['version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true'];
    for (const [label, sections] of [['stream headers', sink], ['an OTLP header value that is a number', otlp]] as const) {
      fs.writeFileSync(toml, [...head, ...sections].join('\n'));
      for (const backend of ['memory', 'native'] as const) {
        const logger = recordingLogger();
        const plugin = createNemoRelayPlugin({ backend, logger, env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: toml, NEMO_RELAY_HOOKS_OUTPUTS: 'off' } });
        await plugin.ready;
        const status = plugin.status();
        await plugin.shutdown({ timeoutMs: 1000 });
        const refusal = status.pluginConfig.diagnostics.map((d) => d.message).join('\n');
        expect(refusal, `${label} on ${backend}`).toMatch(label === 'stream headers' ? /invalid type: string "\*\*\*", expected a map/ : /invalid type: integer `\*\*\*`, expected a string/);
        expectNoSecret(`status() on ${backend} (${label})`, JSON.stringify(status));
        expectNoSecret(`the log on ${backend} (${label})`, JSON.stringify(logger.lines));
        expect(JSON.stringify([status, logger.lines])).not.toContain('918273645');
      }
      for (const args of [['doctor'], ['doctor', '--json']]) {
        const run = cli([...args, '--offline'], { env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: toml, NEMO_RELAY_HOOKS_OUTPUTS: 'off' } });
        expectNoSecret(`${args.join(' ')} (${label})`, run.stdout + run.stderr);
        expect(run.stdout + run.stderr).not.toContain('918273645');
      }
    }
  });

  it('displayUrl and displaySettingValue: what they keep and what they hide', () => {
    expect(displayUrl('http://user:pw@host:4318/v1/traces')).toBe('http://***@host:4318/v1/traces');
    expect(displayUrl('https://token@host/x')).toBe('https://***@host/x');
    expect(displayUrl('http://host/x?api_key=abc&keep=1')).toBe('http://host/x?api_key=***&keep=1');
    expect(displayUrl('http://host/x?client_secret=a&refresh_token=b&X-Api-Key=c&db_password=d&keep=1')).toBe('http://host/x?client_secret=***&refresh_token=***&X-Api-Key=***&db_password=***&keep=1');
    expect(displayUrl('http://host:4318/v1/traces')).toBe('http://host:4318/v1/traces');
    expect(displayUrl('not a url //u:p@x')).toBe('not a url //***@x');
    expect(displaySettingValue('NEMO_RELAY_HOOKS_OTLP_HEADERS', 'authorization=Bearer x,x-team=agents,loose')).toBe('authorization=***,x-team=***,***');
    expect(displaySettingValue('NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY', '/var/out')).toBe('/var/out');
  });

  it('withoutUrlSecrets: the URLs a runtime\'s own error text quotes, shown as displayUrl shows them', () => {
    // Bun's WebSocket error quotes the URL it was given, its query token and all.
    expect(withoutUrlSecrets("WebSocket connection to 'wss://127.0.0.1:9/stream?token=WSTOKEN' failed: Failed to connect")).toBe(
      "WebSocket connection to 'wss://127.0.0.1:9/stream?token=***' failed: Failed to connect",
    );
    expect(withoutUrlSecrets('to https://u:pw@a.example/x?sig=S1 and (http://b.example/y?keep=1), then "ws://c/z?api_key=K"')).toBe(
      'to https://***@a.example/x?sig=*** and (http://b.example/y?keep=1), then "ws://c/z?api_key=***"',
    );
    expect(withoutUrlSecrets('no address here: ECONNREFUSED 127.0.0.1:9')).toBe('no address here: ECONNREFUSED 127.0.0.1:9');
    expect(withoutUrlSecrets('could not reach https://h/x?token=T0KEN: refused.')).toBe('could not reach https://h/x?token=***: refused.');
  });
});
