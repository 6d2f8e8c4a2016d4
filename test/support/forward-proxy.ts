/**
 * A loopback forward proxy, as a corporate one behaves: an absolute-URI
 * request (`POST http://host/path`) is forwarded to its target and answered
 * with the target's answer; `CONNECT host:port` opens a TCP tunnel. Every
 * request and tunnel is logged with its `Proxy-Authorization`, so a test can
 * tell what went through it and with which credentials. `refuseConnect`
 * answers every CONNECT with that status instead; `requireAuthorization`
 * answers 407 to any request or CONNECT without that `Proxy-Authorization`.
 */
import http from 'node:http';
import net from 'node:net';

export interface ProxyLogEntry {
  method: string;
  /** The absolute URI asked for, or CONNECT's `host:port`. */
  target: string;
  authorization: string | undefined;
}

export interface ForwardProxy {
  readonly port: number;
  readonly url: string;
  readonly log: ProxyLogEntry[];
  close(): Promise<void>;
}

export async function startForwardProxy(options: { refuseConnect?: number; requireAuthorization?: string } = {}): Promise<ForwardProxy> {
  const log: ProxyLogEntry[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((request, response) => {
    log.push({ method: request.method ?? '', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    if (options.requireAuthorization !== undefined && request.headers['proxy-authorization'] !== options.requireAuthorization) {
      request.resume();
      response.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('not an absolute URI');
      return;
    }
    const headers = { ...request.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request({ host: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, method: request.method, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => response.headersSent ? response.destroy() : response.writeHead(502).end());
    request.pipe(upstream);
  });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    log.push({ method: 'CONNECT', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    if (options.refuseConnect !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseConnect} Refused\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    if (options.requireAuthorization !== undefined && request.headers['proxy-authorization'] !== options.requireAuthorization) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="proxy"\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const [host, port] = splitAuthority(request.url ?? '');
    const upstream = net.connect({ host, port }, () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function splitAuthority(authority: string): [string, number] {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(authority);
  return match === null ? [authority, 443] : [match[1]!, Number(match[2])];
}
