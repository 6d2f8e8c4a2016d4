// What the memory relay's HTTP outputs do with a redirect, one rule for all
// (delivery/redirect.ts), against a real loopback receiver that redirects:
// stream sinks and ATIF uploads follow 307/308 with the same body (as
// native's sinks do), credential headers left behind off the origin; a
// 301/302/303 fails naming where (native's sink silently re-sends a GET
// without the event); OTLP follows nothing and does not retry, as native.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { withProcessEnv } from '../support/process-env.ts';

const NO_PROXY_VARS = { HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };

const closers: (() => Promise<void>)[] = [];
const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${name}-`));
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Seen {
  method: string;
  path: string;
  body: string;
  authorization: string | undefined;
  tenant: string | undefined;
  filename: string | undefined;
  securityToken: string | undefined;
}

/** A receiver answering `route(path)`: a redirect (status and Location) or null for 200. */
async function receiver(route: (path: string) => { status: number; location: string } | null): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '';
      seen.push({
        method: request.method ?? '',
        path: url,
        body: Buffer.concat(chunks).toString('utf8'),
        authorization: request.headers.authorization,
        tenant: request.headers['x-tenant'] as string | undefined,
        filename: request.headers['x-nemo-relay-atif-filename'] as string | undefined,
        securityToken: request.headers['x-amz-security-token'] as string | undefined,
      });
      const redirect = route(url);
      if (redirect !== null) response.writeHead(redirect.status, { location: redirect.location }).end();
      else response.writeHead(200, { 'content-type': url.startsWith('/v1/') ? 'application/x-protobuf' : 'application/json' }).end(url.startsWith('/v1/') ? undefined : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const stream = (url: string, extra: string[] = []) => ['[[components.config.atof.sinks]]', 'type = "stream"', `url = "${url}"`, 'transport = "http_post"', 'timeout_millis = 3000', ...extra];
const CREDENTIALS = ['[components.config.atof.sinks.headers]', 'authorization = "Bearer redirect-4711"', 'x-tenant = "acme"'];

function document(dir: string, sections: string[][]): string {
  const file = path.join(dir, 'plugins.toml');
  const head = ['version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true'];
  const atof = ['[[components.config.atof.sinks]]', 'type = "file"', `output_directory = ${JSON.stringify(dir)}`, 'filename = "events.jsonl"'];
  fs.writeFileSync(file, [...head, ...atof, ...sections.flat()].join('\n'));
  return file;
}

interface Output {
  kind: string;
  path: string;
  sent?: number;
  failed?: number;
  errors?: number;
  lastError?: string;
}

async function runSession(toml: string): Promise<Output[]> {
  withProcessEnv(NO_PROXY_VARS);
  const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
  hooks.emit('on_session_end', { session_id: 's1' });
  await plugin.shutdown!({ timeoutMs: 8000 });
  return plugin.status!().outputs as Output[];
}

const eventsOf = (dir: string) => fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8');

describe('stream sinks and ATIF uploads follow a 307 or 308 with the same request', () => {
  it('same origin: the same POST, body and headers (credentials included) at the new location; off the origin, the credential headers stay behind', async () => {
    const other = await receiver(() => null);
    const main = await receiver((p) =>
      p.startsWith('/same') ? { status: 308, location: `/moved${p}` } : p.startsWith('/cross') ? { status: 307, location: `${other.origin.replace('127.0.0.1', 'localhost')}/landed${p}` } : p.startsWith('/atif') ? { status: 307, location: '/moved/atif' } : null,
    );
    const dir = tempDir('redirect-follow');
    const toml = document(dir, [
      stream(`${main.origin}/same`, CREDENTIALS),
      stream(`${main.origin}/cross`, CREDENTIALS),
      ['[components.config.atif]', 'enabled = true', `output_directory = ${JSON.stringify(path.join(dir, 'atif'))}`, '[[components.config.atif.storage]]', 'type = "http"', `endpoint = "${main.origin}/atif"`, 'timeout_millis = 3000'],
    ]);
    const outputs = await runSession(toml);
    for (const output of outputs.filter((o) => o.kind === 'atof-stream' || o.kind === 'atif-storage')) expect(output, JSON.stringify(output)).toMatchObject({ failed: 0, errors: 0 });
    const events = eventsOf(dir);
    const at = (seen: Seen[], prefix: string) => seen.filter((s) => s.path.startsWith(prefix));
    expect(at(main.seen, '/same').map((s) => s.body).join('')).toBe(events);
    expect(at(main.seen, '/moved/same').map((s) => s.body).join('')).toBe(events);
    expect(at(main.seen, '/moved/same').every((s) => s.method === 'POST' && s.authorization === 'Bearer redirect-4711' && s.tenant === 'acme')).toBe(true);
    expect(at(other.seen, '/landed/cross').map((s) => s.body).join('')).toBe(events);
    expect(at(other.seen, '/landed/cross').every((s) => s.method === 'POST' && s.authorization === undefined && s.tenant === 'acme')).toBe(true);
    const upload = at(main.seen, '/moved/atif');
    expect(upload).toHaveLength(1);
    expect(upload[0]).toMatchObject({ method: 'POST', filename: at(main.seen, '/atif')[0]?.filename });
    expect(upload[0]!.body).toBe(at(main.seen, '/atif')[0]!.body);
    expect(upload[0]!.filename).toMatch(/\.json$/);
    expect(JSON.parse(upload[0]!.body)).toHaveProperty('session_id');
  });

  it('an S3 upload sent off its origin goes to the new location\'s path, without its signature or session token', async () => {
    // A trial's S3 endpoint answered 307 to another host: the PUT went there to the old path, every hop, carrying
    // the x-amz-security-token (the temporary credential) while the signature stayed behind.
    withProcessEnv({ NRH_S3_SECRET: 'secretKEY/1', NRH_S3_TOKEN: 'sessionTOKEN-1' });
    const other = await receiver(() => null);
    const main = await receiver((p) => (p.startsWith('/bucket/') ? { status: 307, location: `${other.origin.replace('127.0.0.1', 'localhost')}/landed${p}` } : null));
    const dir = tempDir('redirect-s3');
    const s3 = ['[components.config.atif]', 'enabled = true', `output_directory = ${JSON.stringify(path.join(dir, 'atif'))}`, '[[components.config.atif.storage]]', 'type = "s3"', 'bucket = "bucket"'];
    const outputs = await runSession(
      document(dir, [[...s3, `endpoint_url = "${main.origin}"`, 'allow_http = true', 'access_key_id = "AKIDTEST"', 'secret_access_key_var = "NRH_S3_SECRET"', 'session_token_var = "NRH_S3_TOKEN"']]),
    );
    const sent = main.seen.filter((s) => s.path.startsWith('/bucket/'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'PUT', securityToken: 'sessionTOKEN-1' });
    expect(sent[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(other.seen.map((s) => [s.method, s.path, s.authorization, s.securityToken])).toEqual([['PUT', `/landed${sent[0]!.path}`, undefined, undefined]]);
    expect(other.seen[0]!.body).toBe(sent[0]!.body);
    expect(outputs.find((o) => o.kind === 'atif-storage')).toMatchObject({ sent: 1, failed: 0 });
  });

  it('gives up after 10 redirects, and never follows to a non-http(s) URL, naming where it was sent', async () => {
    const main = await receiver((p) => (p.startsWith('/loop') ? { status: 308, location: `${p}x` } : p.startsWith('/ftp') ? { status: 307, location: 'ftp://127.0.0.1/events' } : null));
    const dir = tempDir('redirect-limits');
    const outputs = await runSession(document(dir, [stream(`${main.origin}/loop`), stream(`${main.origin}/ftp`)]));
    const [loop, ftp] = outputs.filter((o) => o.kind === 'atof-stream');
    const events = eventsOf(dir).trim().split('\n').length;
    expect(loop).toMatchObject({ sent: 0, failed: events });
    expect(loop!.lastError).toBe(`POST ${main.origin}/loopxxxxxxxxxx answered HTTP 308, redirecting to ${main.origin}/loopxxxxxxxxxxx: not delivered; more than 10 redirects`);
    expect(main.seen.filter((s) => s.path.startsWith('/loop'))).toHaveLength(events * 11);
    expect(ftp).toMatchObject({ sent: 0, failed: events });
    expect(ftp!.lastError).toBe(`POST ${main.origin}/ftp answered HTTP 307, redirecting to ftp://127.0.0.1/events: not delivered; only http and https locations are followed`);
  });
});

describe('a redirect that would lose the body, and OTLP, are failures that name the location', () => {
  it('a 302 on a stream sink: each event fails at once (no GET, no retry), lastError naming the status and the new location', async () => {
    const main = await receiver((p) => (p.startsWith('/found') ? { status: 302, location: '/elsewhere?token=s3cret' } : null));
    const dir = tempDir('redirect-302');
    const outputs = await runSession(document(dir, [stream(`${main.origin}/found`)]));
    const sink = outputs.find((o) => o.kind === 'atof-stream')!;
    const events = eventsOf(dir).trim().split('\n').length;
    expect(sink).toMatchObject({ sent: 0, failed: events, errors: events });
    expect(sink.lastError).toBe(
      `POST ${main.origin}/found answered HTTP 302, redirecting to ${main.origin}/elsewhere?token=***: not delivered; a 302 would turn the POST into a GET without its body, so it is not followed: set the URL to the new location`,
    );
    expect(main.seen.map((s) => `${s.method} ${s.path}`)).toEqual(Array(events).fill('POST /found'));
  });

  it('OTLP/HTTP follows no redirect (as native): the batch fails once, not retried, lastError naming the status and location', async () => {
    const main = await receiver((p) => (p.startsWith('/v1/') ? { status: 308, location: `/moved${p}` } : null));
    const dir = tempDir('redirect-otlp');
    const otlp = ['[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "full"', `endpoint = "${main.origin}"`, 'transport = "http_binary"', 'scheduled_delay_millis = 10'];
    const outputs = await runSession(document(dir, [otlp]));
    const traces = outputs.find((o) => o.kind === 'otlp-traces')!;
    expect(traces).toMatchObject({ sent: 0, failed: 1, errors: 1 });
    expect(traces.lastError).toBe(`1 items not delivered: POST ${main.origin}/v1/traces answered HTTP 308, redirecting to ${main.origin}/moved/v1/traces: not delivered; this output follows no redirect: set its URL to the new location`);
    expect(main.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/traces']);
  });

  it('the ndjson stream (its lines cannot be sent again elsewhere) reports a redirect the same way', async () => {
    const main = await receiver((p) => (p.startsWith('/ndjson') ? { status: 308, location: '/moved/ndjson' } : null));
    const dir = tempDir('redirect-ndjson');
    const outputs = await runSession(document(dir, [['[[components.config.atof.sinks]]', 'type = "stream"', `url = "${main.origin}/ndjson"`, 'transport = "ndjson"', 'timeout_millis = 3000']]));
    const sink = outputs.find((o) => o.kind === 'atof-stream')!;
    expect(sink.sent).toBe(0);
    expect(sink.lastError).toBe(`POST ${main.origin}/ndjson answered HTTP 308, redirecting to ${main.origin}/moved/ndjson: not delivered; this output follows no redirect: set its URL to the new location`);
  });
});

describe('the timeout bounds the whole exchange, redirects included', () => {
  it('a redirect to a place that never answers fails when the configured budget is spent, and says that budget, not what was left of it after the first hop', async () => {
    const { sendHttp } = await import('../../src/export/delivery/http.ts');
    const { DeliveryTimeoutError } = await import('../../src/export/delivery/errors.ts');
    withProcessEnv(NO_PROXY_VARS);
    const hanging: http.ServerResponse[] = [];
    const server = http.createServer((request, response) => {
      request.resume();
      // The first hop answers late, then points at a path that never answers.
      if (request.url === '/slow-redirect') setTimeout(() => response.writeHead(307, { location: '/hang' }).end(), 150);
      else hanging.push(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise((resolve) => {
          for (const response of hanging) response.destroy();
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const started = Date.now();
    const failure = await sendHttp({ url: `${origin}/slow-redirect`, method: 'POST', headers: {}, body: '{}', timeoutMs: 600, signal: new AbortController().signal }).then(
      () => null,
      (error: unknown) => error,
    );
    const took = Date.now() - started;
    expect(failure).toBeInstanceOf(DeliveryTimeoutError);
    expect((failure as Error).message).toBe(`POST ${origin}/hang got no answer within 600 ms`);
    // Both hops share the budget: the second waited what was left, not a fresh 600 ms.
    expect(took).toBeLessThan(1100);
    expect(hanging).toHaveLength(1);
  });
});
