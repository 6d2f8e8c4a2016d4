// Which requests go through HTTP_PROXY / HTTPS_PROXY / ALL_PROXY, and which
// NO_PROXY sends direct (ATOF http_post and ndjson sinks; OTLP/HTTP and the
// uploads go through the same sender, test/export/proxy.test.ts), on the memory relay and on native (reqwest's
// system proxy), for the same environment and the same document: each
// backend runs in a child process with the variables set (native reads the
// real process environment) behind one loopback proxy that logs what it is
// asked and answers 200 to requests, 502 to CONNECT. The set of requests each
// proxy saw must be the same. Each rule of src/export/delivery/proxy.ts is a
// case here.
import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { dist, spawnChild } from '../support/child.ts';

const TARGETS = [
  'http://a.example.test/x',
  'https://b.example.test/y',
  'http://example.test/z',
  'http://sub.a.example.test:8080/w',
  'http://10.1.2.3/ip',
  'http://[::5]/v6',
  'http://c.other.test:81/p',
];

/** The variables of each case; `PROXY` stands for the proxy's `127.0.0.1:port`. */
const CASES: Record<string, string>[] = [
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY' },
  { http_proxy: 'http://PROXY', https_proxy: 'http://PROXY' },
  { HTTP_PROXY: 'http://PROXY' },
  { HTTPS_PROXY: 'http://PROXY' },
  { ALL_PROXY: 'http://PROXY' },
  { all_proxy: 'http://PROXY', HTTP_PROXY: '' },
  { HTTP_PROXY: 'PROXY' },
  { HTTP_PROXY: 'http://127.0.0.1:1', http_proxy: 'http://PROXY' },
  { HTTP_PROXY: 'http://u%40x:p%3Ass@PROXY', HTTPS_PROXY: 'http://u:p@PROXY' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: 'example.test' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: '.example.test' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: ' a.example.test, b.example.test:443 ,c.other.test:81,' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: '*' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: '*.example.test,xample.test,example.test.' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: 'EXAMPLE.TEST' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: '10.0.0.0/8,::5' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', NO_PROXY: '10.1.2.3,[::5]' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', no_proxy: 'example.test', NO_PROXY: 'other.test' },
  { HTTP_PROXY: 'http://PROXY', HTTPS_PROXY: 'http://PROXY', REQUEST_METHOD: 'GET' },
];

const PROXY_VARIABLES = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy', 'REQUEST_METHOD'];

function document(dir: string): string {
  const file = path.join(dir, 'plugins.toml');
  const sinks = TARGETS.map((url) => ['[[components.config.atof.sinks]]', 'type = "stream"', `url = "${url}"`, 'transport = "http_post"', 'timeout_millis = 1500'].join('\n'));
  fs.writeFileSync(
    file,
    [
      'version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true',
      '[[components.config.atof.sinks]]', 'type = "file"', `output_directory = ${JSON.stringify(dir)}`, 'filename = "events.jsonl"',
      ...sinks,
      '[[components.config.atof.sinks]]', 'type = "stream"', 'url = "http://nd.example.test/n"', 'transport = "ndjson"', 'timeout_millis = 1500',
    ].join('\n'),
  );
  return file;
}

/** What the proxy saw while `backend` ran the document with `variables`. */
async function proxied(backend: 'native' | 'memory', variables: Record<string, string>): Promise<string[]> {
  const seen = new Set<string>();
  const server = http.createServer((request, response) => {
    seen.add(`${request.method} ${request.url} ${request.headers['proxy-authorization'] ?? '-'}`);
    request.resume();
    request.on('end', () => response.writeHead(200).end('{}'));
  });
  server.on('connect', (request: http.IncomingMessage, socket: import('node:net').Socket) => {
    seen.add(`CONNECT ${request.url} ${request.headers['proxy-authorization'] ?? '-'}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const authority = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nrh-proxy-${backend}-`));
  const env: Record<string, string | undefined> = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, undefined]));
  for (const [name, value] of Object.entries(variables)) env[name] = value.replace('PROXY', authority);
  try {
    const child = await spawnChild(
      `const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)}, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(document(dir))} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 10000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().backend.kind));`,
      { env: { ...env, DENO_NO_UPDATE_CHECK: '1' } },
    );
    expect(child.result, child.stderr).toBe(backend);
    return [...seen].sort();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe.skipIf(!nativeAvailable)(`the proxy variables on memory as on native${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each(CASES.map((variables) => [JSON.stringify(variables), variables] as const))('%s', async (_name, variables) => {
    const [native, memory] = await Promise.all([proxied('native', variables), proxied('memory', variables)]);
    expect(memory).toEqual(native);
  }, 60_000);

  it('the cases are worth comparing: with both variables set, each backend proxies both transports and both schemes', async () => {
    const native = await proxied('native', CASES[0]!);
    expect(native).toEqual(expect.arrayContaining(['POST http://nd.example.test/n -', 'POST http://a.example.test/x -', 'CONNECT b.example.test:443 -']));
  }, 60_000);
});
