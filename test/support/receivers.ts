/**
 * A loopback receiver for the remote outputs: one `node:http` server on
 * 127.0.0.1 that records every request (headers, body, chunk count), takes
 * WebSocket upgrades (the `ws` package's server) and S3-style PUTs whose
 * SigV4 signature it recomputes with `aws4` from the request it received.
 * Answers are scripted per path: a status list consumed one request at a
 * time (then 200), or a path that never answers.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import aws4 from 'aws4';
import { WebSocketServer } from 'ws';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Name, value, name, value…: a header sent twice is here twice (`headers` keeps one `authorization`). */
  rawHeaders: string[];
  body: string;
  /** Data events the body arrived in (a streamed request has many). */
  chunks: number;
  /** S3 PUTs: whether the SigV4 signature matched the credentials. */
  signatureValid?: boolean;
}

export interface ReceivedSocket {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  messages: string[];
  binaryFrames: number;
  closeCode: number | null;
}

export interface Scripted {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  readonly port: number;
  readonly origin: string;
  readonly requests: ReceivedRequest[];
  readonly sockets: ReceivedSocket[];
  /** The next answers for `path` (one per request), before the default 200. */
  script(path: string, answers: Scripted[]): void;
  /** Requests to `path` are read but never answered (until close). */
  hang(path: string): void;
  /** Resolves once `count` requests (or sockets with messages) to `path` are complete. */
  waitFor(path: string, count: number): Promise<void>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Credentials S3 PUTs are verified against. */
  s3?: { accessKeyId: string; secretAccessKey: string; region: string };
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const sockets: ReceivedSocket[] = [];
  const scripts = new Map<string, Scripted[]>();
  const hanging = new Set<string>();
  const held: http.ServerResponse[] = [];
  const waiters: { path: string; count: number; resolve: () => void }[] = [];
  const countFor = (path: string) => requests.filter((r) => r.path === path).length + sockets.filter((s) => s.path === path && s.closeCode !== null).length;
  const wake = () => {
    for (const waiter of [...waiters]) {
      if (countFor(waiter.path) >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    const path = request.url ?? '/';
    if (hanging.has(path)) {
      held.push(response);
      request.resume();
      return;
    }
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const record: ReceivedRequest = { method: request.method ?? '', path, headers: request.headers, rawHeaders: request.rawHeaders, body: body.toString('utf8'), chunks: chunks.length };
      if (request.method === 'PUT' && options.s3 !== undefined) record.signatureValid = verifySigV4(request, body, options.s3);
      requests.push(record);
      const answer = scripts.get(path)?.shift() ?? { status: 200 };
      response.writeHead(answer.status, { 'content-type': 'text/plain', ...(request.method === 'PUT' ? { etag: '"1"' } : {}), ...answer.headers });
      response.end();
      wake();
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, request) => {
    const record: ReceivedSocket = { path: request.url ?? '/', headers: request.headers, rawHeaders: request.rawHeaders, messages: [], binaryFrames: 0, closeCode: null };
    sockets.push(record);
    socket.on('message', (data, isBinary) => {
      if (isBinary) record.binaryFrames++;
      else record.messages.push(data.toString());
    });
    socket.on('close', (code) => {
      record.closeCode = code;
      wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    sockets,
    script: (path, answers) => scripts.set(path, [...answers]),
    hang: (path) => hanging.add(path),
    waitFor: (path, count) =>
      new Promise<void>((resolve) => {
        waiters.push({ path, count, resolve });
        wake();
      }),
    close: async () => {
      for (const response of held) response.destroy();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Recomputes the request's SigV4 signature with aws4 over exactly the headers it says it signed. */
function verifySigV4(request: http.IncomingMessage, body: Buffer, credentials: { accessKeyId: string; secretAccessKey: string; region: string }): boolean {
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (match === null || match[1] !== credentials.accessKeyId || match[2] !== credentials.region) return false;
  if (request.headers['x-amz-content-sha256'] !== createHash('sha256').update(body).digest('hex')) return false;
  const signedNames = match[3]!.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedNames) headers[name] = String(request.headers[name] ?? '');
  const expected = aws4.sign(
    {
      service: 's3',
      region: credentials.region,
      method: request.method,
      host: headers.host,
      path: request.url,
      headers,
      body,
      // aws4 adds these when absent; they count only when the request signed them.
      extraHeadersToIgnore: Object.fromEntries(['content-type', 'content-length'].filter((name) => !signedNames.includes(name)).map((name) => [name, true])),
    } as aws4.Request,
    { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
  );
  return String((expected.headers as Record<string, string>).Authorization ?? (expected.headers as Record<string, string>).authorization) === authorization;
}
