// ATOF stream sinks against a real loopback receiver: what each transport
// sends (as native 0.9.2 sends it, see ../shared/reference/native-otlp.md
// §5), and what happens when the receiver is busy, wrong or gone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAtofStreamSink, type AtofStreamSinkOptions } from '../../src/export/streams/sink.ts';
import type { StreamSinkSettings } from '../../src/formats/plugins-toml/sinks.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { startReceiver, type Receiver } from '../support/receivers.ts';

const FAST: AtofStreamSinkOptions = { logger: silentLogger, retry: { initialDelayMs: 5, maxDelayMs: 50, maxRetries: 3 } };
const event = (i: number, extra: Record<string, unknown> = {}) => JSON.stringify({ atof_version: '0.1', kind: 'mark', name: `m${i}`, ...extra });

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await receiver.close();
});

function settings(path: string, overrides: Partial<StreamSinkSettings> = {}): StreamSinkSettings {
  return {
    index: 0,
    name: undefined,
    url: `${receiver.origin}${path}`,
    transport: 'http_post',
    headers: { 'x-probe': 'post', authorization: 'Bearer tok' },
    timeoutMillis: 2000,
    fieldNamePolicy: 'preserve',
    ...overrides,
  };
}

describe('http_post transport', () => {
  it('sends one application/x-ndjson POST per event, one line each, with the configured headers, in order', async () => {
    const sink = createAtofStreamSink(settings('/atof/post'), FAST);
    for (let i = 0; i < 5; i++) sink.accept(event(i));
    await sink.close();
    const posts = receiver.requests.filter((r) => r.path === '/atof/post');
    expect(posts.map((r) => r.body)).toEqual([0, 1, 2, 3, 4].map((i) => `${event(i)}\n`));
    for (const post of posts) {
      expect(post.method).toBe('POST');
      expect(post.headers['content-type']).toBe('application/x-ndjson');
      expect(post.headers['x-probe']).toBe('post');
      expect(post.headers.authorization).toBe('Bearer tok');
      expect(post.headers['content-length']).toBe(String(Buffer.byteLength(post.body)));
    }
    expect(sink.health()).toMatchObject({ kind: 'atof-stream', path: `${receiver.origin}/atof/post`, sent: 5, failed: 0, dropped: 0, errors: 0 });
    expect(sink.health().bytes).toBe(posts.reduce((n, r) => n + Buffer.byteLength(r.body), 0));
  });

  it('retries 429 and 502-504 answers, honouring Retry-After, and delivers every event once', async () => {
    receiver.script('/atof/post', [
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 429 },
      { status: 502 },
      { status: 504 },
    ]);
    const sink = createAtofStreamSink(settings('/atof/post'), { ...FAST, retry: { initialDelayMs: 5, maxDelayMs: 50, maxRetries: 4 } });
    sink.accept(event(1));
    sink.accept(event(2));
    expect(await sink.flush(5000)).toBe(true);
    await sink.close();
    const bodies = receiver.requests.map((r) => r.body);
    expect(bodies).toEqual([1, 1, 1, 1, 1, 2].map((i) => `${event(i)}\n`));
    expect(sink.health()).toMatchObject({ sent: 2, failed: 0, dropped: 0, errors: 4 });
  });

  it('does not retry a 400: the event is counted as failed and the next one still goes out', async () => {
    receiver.script('/atof/post', [{ status: 400 }]);
    const sink = createAtofStreamSink(settings('/atof/post'), FAST);
    sink.accept(event(1));
    sink.accept(event(2));
    await sink.close();
    expect(receiver.requests.map((r) => r.body)).toEqual([`${event(1)}\n`, `${event(2)}\n`]);
    expect(sink.health()).toMatchObject({ sent: 1, failed: 1, dropped: 0, errors: 1 });
    expect(sink.health().lastError).toContain('HTTP 400');
  });

  it('counts every event as failed when nothing listens, after retrying the connection', async () => {
    const port = await closedPort();
    const sink = createAtofStreamSink({ ...settings('/x'), url: `http://127.0.0.1:${port}/x` }, FAST);
    for (let i = 0; i < 3; i++) sink.accept(event(i));
    expect(await sink.flush(5000)).toBe(true);
    await sink.close();
    expect(sink.health()).toMatchObject({ sent: 0, failed: 3, dropped: 0, errors: 12 });
    expect(sink.health().lastError).toMatch(/ECONNREFUSED|refused|connect/i);
  });

  it('drops and counts events beyond its queue bound instead of holding them all', async () => {
    receiver.hang('/slow');
    const sink = createAtofStreamSink(settings('/slow', { timeoutMillis: 200 }), { ...FAST, maxQueuedEvents: 3, retry: { maxRetries: 0 } });
    for (let i = 0; i < 10; i++) sink.accept(event(i));
    expect(sink.health()).toMatchObject({ dropped: 7, sent: 0 });
    await sink.close(1000);
    const health = sink.health();
    expect(health.sent).toBe(0);
    expect((health.failed ?? 0) + (health.dropped ?? 0)).toBe(10);
  });

  it('close() against a receiver that is down tries once more and drops the rest at once, counted', async () => {
    const port = await closedPort();
    const sink = createAtofStreamSink({ ...settings('/x'), url: `http://127.0.0.1:${port}/x` }, { ...FAST, retry: { initialDelayMs: 60_000, maxRetries: 4 } });
    for (let i = 0; i < 4; i++) sink.accept(event(i));
    while (sink.health().errors === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // The first event is now waiting out a one-minute backoff; close() cuts it short instead of waiting.
    await sink.close(60_000);
    expect(sink.health()).toMatchObject({ sent: 0, failed: 1, dropped: 3, errors: 2 });
  });

  it('close() against a receiver that never answers returns within its budget and counts what was left', async () => {
    receiver.hang('/hang');
    const sink = createAtofStreamSink(settings('/hang', { timeoutMillis: 60_000 }), FAST);
    for (let i = 0; i < 4; i++) sink.accept(event(i));
    await sink.close(300);
    expect(sink.health()).toMatchObject({ sent: 0, failed: 0, dropped: 4 });
  });
});

describe('ndjson transport', () => {
  it('sends one long-lived chunked POST, one line per event, ended at close', async () => {
    const sink = createAtofStreamSink(settings('/atof/ndjson', { transport: 'ndjson', headers: { 'x-probe': 'ndjson' } }), FAST);
    for (let i = 0; i < 6; i++) sink.accept(event(i));
    await sink.close();
    const streams = receiver.requests.filter((r) => r.path === '/atof/ndjson');
    expect(streams).toHaveLength(1);
    expect(streams[0]!.headers['transfer-encoding']).toBe('chunked');
    expect(streams[0]!.headers['content-type']).toBe('application/x-ndjson');
    expect(streams[0]!.headers['x-probe']).toBe('ndjson');
    expect(streams[0]!.body).toBe([0, 1, 2, 3, 4, 5].map((i) => `${event(i)}\n`).join(''));
    expect(sink.health()).toMatchObject({ sent: 6, failed: 0, dropped: 0 });
  });

  it('with replace_dots, sends every key with its dots turned into underscores', async () => {
    const sink = createAtofStreamSink(settings('/n', { transport: 'ndjson', fieldNamePolicy: 'replace_dots' }), FAST);
    sink.accept(event(1, { metadata: { 'otel.status_code': 'ERROR', nested: [{ 'a.b.c': 'x.y' }] } }));
    await sink.close();
    expect(JSON.parse(receiver.requests[0]!.body)).toEqual({
      atof_version: '0.1',
      kind: 'mark',
      name: 'm1',
      metadata: { otel_status_code: 'ERROR', nested: [{ a_b_c: 'x.y' }] },
    });
  });

  it('a receiver that refuses the stream when it ends (401, 500) makes its events failed, not sent, and says so', async () => {
    // A collector reads the whole chunked body and only then answers: a wrong token or a failing backend is known
    // after every line reached the socket. Those lines did not arrive anywhere.
    receiver.script('/refused', [{ status: 401 }]);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const sink = createAtofStreamSink(settings('/refused', { transport: 'ndjson' }), { ...FAST, logger });
    for (let i = 0; i < 3; i++) sink.accept(event(i));
    await sink.close();
    expect(receiver.requests.filter((r) => r.path === '/refused')).toHaveLength(1);
    expect(sink.health()).toMatchObject({ sent: 0, failed: 3, dropped: 0, bytes: 0, lastError: `POST ${receiver.origin}/refused answered HTTP 401` });
    expect(sink.health().errors).toBeGreaterThan(0);
    expect(warnings).toEqual([`ATOF stream ${receiver.origin}/refused: events are being lost (POST ${receiver.origin}/refused answered HTTP 401); see status() outputs for counts`]);
  });

  it('retries the stream when the receiver is down, then counts the event as failed', async () => {
    const port = await closedPort();
    const sink = createAtofStreamSink({ ...settings('/n', { transport: 'ndjson' }), url: `http://127.0.0.1:${port}/n` }, FAST);
    sink.accept(event(1));
    expect(await sink.flush(5000)).toBe(true);
    await sink.close();
    expect(sink.health()).toMatchObject({ sent: 0, failed: 1, dropped: 0 });
    expect(sink.health().errors).toBeGreaterThan(1);
  });
});

/**
 * A loopback ndjson receiver that reads each chunked POST line by line: the first request is cut by `first` once it
 * has read `after` lines (`'drop'`: the connection destroyed, as a receiver that dies; `'hang'`: never answered), and
 * every later request is answered 200 when it ends.
 */
async function cuttingReceiver(first: 'drop' | 'hang', after: number) {
  const bodies: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let cut = false;
  const server = http.createServer((req, res) => {
    const index = bodies.push('') - 1;
    const cutThis = index === 0;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      bodies[index] += chunk;
      if (cutThis && first === 'drop' && !cut && bodies[index]!.split('\n').length - 1 >= after) {
        cut = true;
        req.socket.destroy();
      }
    });
    req.on('end', () => {
      if (!cutThis || first !== 'hang') res.end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/n`,
    bodies,
    lines: (index: number) => (bodies[index] ?? '').split('\n').filter(Boolean).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Waits for `done`, at most 10 s (then the assertions after it say what is missing). */
const until = async (done: () => boolean) => {
  for (const end = Date.now() + 10_000; !done() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('ndjson transport: a line is sent only once its request ended with a 2xx answer', () => {
  // QA killed the receiver while the one long-lived request was open: its lines never arrived, and status() said
  // `sent: 64, failed: 0, errors: 0`, with no warning; a receiver that never answered was counted `sent` too.

  it('counts the lines of an open request as queued, and as sent once the receiver answered 200', async () => {
    const rx = await cuttingReceiver('drop', Number.POSITIVE_INFINITY);
    try {
      const sink = createAtofStreamSink({ ...settings('/n', { transport: 'ndjson' }), url: rx.url }, FAST);
      for (let i = 0; i < 3; i++) sink.accept(event(i));
      expect(await sink.flush(5000)).toBe(true);
      await until(() => rx.lines(0) === 3);
      expect(sink.health()).toMatchObject({ sent: 0, failed: 0, dropped: 0, queued: 3, bytes: 0 });
      await sink.close();
      expect(sink.health()).toMatchObject({ sent: 3, failed: 0, dropped: 0, queued: 0, errors: 0, bytes: Buffer.byteLength(rx.bodies[0]!) });
    } finally {
      await rx.close();
    }
  });

  it('counts the lines a request took as failed when the receiver drops the connection before answering, with one warning', async () => {
    const rx = await cuttingReceiver('drop', 3);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    try {
      const sink = createAtofStreamSink({ ...settings('/n', { transport: 'ndjson' }), url: rx.url }, { ...FAST, logger });
      for (let i = 0; i < 3; i++) sink.accept(event(i));
      await until(() => sink.health().failed === 3);
      // Later events go on a new request, which the receiver answers.
      for (let i = 3; i < 5; i++) sink.accept(event(i));
      await sink.close();
      expect(rx.lines(1)).toBe(2);
      const health = sink.health();
      expect(health).toMatchObject({ sent: 2, failed: 3, dropped: 0, queued: 0, bytes: Buffer.byteLength(rx.bodies[1]!) });
      expect(health.errors).toBeGreaterThanOrEqual(1);
      expect(health.lastError).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/n/);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/: events are being lost \(POST http:\/\/127\.0\.0\.1:\d+\/n.*\); see status\(\) outputs for counts$/);
    } finally {
      await rx.close();
    }
  });

  it('counts them as failed when the receiver has not answered by the close\'s deadline, naming it', async () => {
    const rx = await cuttingReceiver('hang', 0);
    try {
      const sink = createAtofStreamSink({ ...settings('/n', { transport: 'ndjson' }), url: rx.url }, FAST);
      for (let i = 0; i < 4; i++) sink.accept(event(i));
      await until(() => rx.lines(0) === 4);
      await sink.close(300);
      expect(sink.health()).toMatchObject({ sent: 0, failed: 4, dropped: 0, queued: 0, bytes: 0 });
      expect(sink.health().lastError).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/n: no answer within \d+ ms of the stream's end$/);
    } finally {
      await rx.close();
    }
  });

  it('counts them as failed when the sink is abandoned (the process exits) with the request unanswered', async () => {
    const rx = await cuttingReceiver('hang', 0);
    try {
      const sink = createAtofStreamSink({ ...settings('/n', { transport: 'ndjson' }), url: rx.url }, FAST);
      for (let i = 0; i < 2; i++) sink.accept(event(i));
      await until(() => rx.lines(0) === 2 && sink.health().queued === 2 && sink.health().sent === 0);
      sink.abandon('the process exited');
      expect(sink.health()).toMatchObject({ sent: 0, failed: 2, dropped: 0, queued: 0 });
      expect(sink.health().lastError).toMatch(/: no answer \(the process exited\)$/);
    } finally {
      await rx.close();
    }
  });
});

describe('websocket transport', () => {
  it('sends one text frame per event (no newline) after an upgrade that carries the headers, then closes', async () => {
    const sink = createAtofStreamSink({ ...settings('/atof/ws', { transport: 'websocket', headers: { 'x-probe': 'ws' } }), url: `ws://127.0.0.1:${receiver.port}/atof/ws` }, FAST);
    for (let i = 0; i < 4; i++) sink.accept(event(i));
    await sink.close();
    await receiver.waitFor('/atof/ws', 1);
    expect(receiver.sockets).toHaveLength(1);
    const socket = receiver.sockets[0]!;
    expect(socket.headers['x-probe']).toBe('ws');
    expect(socket.messages).toEqual([0, 1, 2, 3].map((i) => event(i)));
    expect(socket.binaryFrames).toBe(0);
    expect(socket.closeCode).toBe(1005);
    expect(sink.health()).toMatchObject({ sent: 4, failed: 0, dropped: 0 });
  });

  it('counts events as failed when the upgrade is refused', async () => {
    const port = await closedPort();
    const sink = createAtofStreamSink({ ...settings('/w', { transport: 'websocket' }), url: `ws://127.0.0.1:${port}/w` }, FAST);
    sink.accept(event(1));
    sink.accept(event(2));
    expect(await sink.flush(5000)).toBe(true);
    await sink.close();
    expect(sink.health()).toMatchObject({ sent: 0, failed: 2, dropped: 0 });
  });
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
