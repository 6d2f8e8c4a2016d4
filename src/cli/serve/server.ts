/**
 * The local server of `view --serve`: the index of the sessions in the
 * folders, each session's timeline, the compare page of two sessions, and a
 * server-sent event stream that tells open pages when a file changed (the
 * folders are looked at every second). Loopback by default; requests whose
 * `Host` is not a loopback name or address are refused when bound to one
 * (`isLoopback`), so a web page elsewhere cannot read the sessions through
 * DNS rebinding. Only
 * sessions in the catalog are served: a request names a catalog key, never
 * a path.
 *
 * @module
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compareRuns } from '../compare/compare-runs.ts';
import { sameRemoteSessions } from '../compare/remote-sessions.ts';
import { renderComparePage } from '../compare/html.ts';
import { renderHtml } from '../view/html.ts';
import { Catalog, FileChangedError } from './catalog.ts';
import { indexPage, liveScript } from './pages.ts';

export interface ServeOptions {
  folders: readonly string[];
  host: string;
  port: number;
  generator: string;
  /** How often the folders are looked at, in milliseconds. */
  pollMs?: number;
  /** Told when a look at the folders failed (the server keeps serving what it had, and looks again). */
  onError?: (message: string) => void;
}

export interface RunningServer {
  url: string;
  catalog: Catalog;
  /** Stops listening, ends the event streams and the polling; resolves when the server is closed. */
  close(): Promise<void>;
}

/** Rows of the index a request gets when it does not say (and the most it may ask for). */
const PAGE_ROWS = 200;
const MAX_PAGE_ROWS = 5000;

/**
 * Whether a host name or address (`--host`, a request's `Host`, bracketed or not) is this machine's loopback:
 * `localhost`, any of 127.0.0.0/8, or ::1, however written (`127.1`, `[0:0:0:0:0:0:0:1]`). The Host guard once knew
 * only the three usual spellings, so a server bound to 127.0.0.2 answered `Host: evil.com`.
 */
function isLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost') return true;
  // A name or address only: nothing the URL parser would read as a user, a path or a port (`evil.com@127.0.0.1`).
  if (!/^[0-9a-f.:[\]x]+$/.test(name)) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${name.includes(':') && !name.startsWith('[') ? `[${name}]` : name}/`).hostname;
  } catch {
    return false;
  }
  return hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const catalog = new Catalog(options.folders);
  catalog.refresh();
  const loopback = isLoopback(options.host);
  const streams = new Set<ServerResponse>();
  const server: Server = createServer((request, response) => {
    try {
      handle(request, response);
    } catch (error) {
      if (error instanceof FileChangedError) return send(response, 409, 'text/plain; charset=utf-8', `${error.message}\n`);
      send(response, 500, 'text/plain; charset=utf-8', `internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  });

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain; charset=utf-8', 'only GET\n');
    const target = requestTarget(request.url ?? '');
    if (target === undefined) return send(response, 400, 'text/plain; charset=utf-8', 'the request target is neither a path nor an http URL\n');
    if (loopback && (!isLoopback(hostName(request.headers.host)) || (target.host !== undefined && !isLoopback(target.host)))) {
      return send(response, 403, 'text/plain; charset=utf-8', 'this server answers on its loopback address only\n');
    }
    // Joined, not resolved: a request for //x stays a path, never a host.
    const url = new URL(`http://localhost${target.path}`);
    url.pathname = withSingleSlashes(url.pathname);
    switch (url.pathname) {
      case '/':
        return send(response, 200, 'text/html; charset=utf-8', indexPage(options.folders, options.generator));
      case '/api/sessions': {
        // One page of the index, filtered here: a folder of 50,000 sessions costs the page what it shows.
        const number = (name: string, fallback: number) => {
          const value = Number(url.searchParams.get(name) ?? fallback);
          return Number.isSafeInteger(value) && value >= 0 ? value : fallback;
        };
        const page = catalog.page({ text: url.searchParams.get('q') ?? '', errorsOnly: url.searchParams.get('errors') === '1', offset: number('offset', 0), limit: Math.min(number('limit', PAGE_ROWS), MAX_PAGE_ROWS) });
        return send(response, 200, 'application/json; charset=utf-8', JSON.stringify({ version: catalog.version, folders: options.folders, ...page, problems: catalog.problems() }));
      }
      case '/api/events':
        return openStream(response);
      case '/session': {
        const found = catalog.find(url.searchParams.get('key') ?? '');
        if (!found) return send(response, 404, 'text/plain; charset=utf-8', 'no such session in the served folders\n');
        const html = renderHtml([{ file: found.file, roots: [found.root] }], options.generator, { back: '/', served: { script: liveScript(found.files, catalog.version) }, notes: found.notes });
        return send(response, 200, 'text/html; charset=utf-8', html);
      }
      case '/compare': {
        const a = catalog.find(url.searchParams.get('a') ?? '');
        const b = catalog.find(url.searchParams.get('b') ?? '');
        if (!a || !b) return send(response, 404, 'text/plain; charset=utf-8', 'compare needs two sessions of the served folders (?a=<key>&b=<key>)\n');
        // The rule `compare` applies to another process's sessions, a referenced trajectory read from the catalog only.
        const files = [...a.files, ...b.files];
        const { onlyRecorded } = sameRemoteSessions(a, b, (absolute) => {
          const referenced = catalog.trajectoryAt(absolute);
          if (referenced !== undefined) files.push(referenced.file);
          return referenced?.root;
        });
        const compared = compareRuns({ ref: { file: a.file, session: a.session }, root: a.root }, { ref: { file: b.file, session: b.session }, root: b.root }, onlyRecorded);
        // What `compare` of the two files says on stderr (each run's `view` notes, its references not found among them).
        const notes = [...new Set([a, b].flatMap((run) => run.notes.map((note) => `${run.file}: ${note}`)))];
        return send(response, 200, 'text/html; charset=utf-8', renderComparePage(compared, options.generator, { back: '/', served: { script: liveScript([...new Set(files)], catalog.version) }, notes }));
      }
      default:
        return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
    }
  };

  const openStream = (response: ServerResponse): void => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    response.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify({ version: catalog.version })}\n\n`);
    streams.add(response);
    response.on('close', () => streams.delete(response));
  };

  const broadcast = (files: string[]): void => {
    const message = `event: change\ndata: ${JSON.stringify({ version: catalog.version, files })}\n\n`;
    for (const stream of streams) stream.write(message);
  };

  // A look that throws (a file changing under the reader in a way it did not foresee) must not end the server from a
  // timer: it keeps what it served, says so once per distinct message, and looks again at the next tick.
  let lastLookError: string | undefined;
  const poll = setInterval(() => {
    try {
      const changed = catalog.refresh();
      lastLookError = undefined;
      if (changed.length > 0) broadcast(changed);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== lastLookError) options.onError?.(`could not look at the folders again (serving what was read before): ${message}`);
      lastLookError = message;
    }
  }, options.pollMs ?? 1000);
  // Proxies close idle streams: a comment every 15 s keeps them open.
  const keepAlive = setInterval(() => {
    for (const stream of streams) stream.write(': keep-alive\n\n');
  }, 15_000);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/`,
    catalog,
    close: () => {
      clearInterval(poll);
      clearInterval(keepAlive);
      for (const stream of streams) stream.end();
      streams.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}

/**
 * The path (with its query) a request asks for, and the host it names when
 * it is in absolute form (`GET http://127.0.0.1:7878/api/sessions`, which
 * HTTP/1.1 servers must accept): answering such a request as `/` served the
 * index for any path. Undefined for anything else (`*`, `example.com:443`).
 */
function requestTarget(raw: string): { path: string; host?: string } | undefined {
  if (raw.startsWith('/')) return { path: raw };
  if (!/^https?:\/\//i.test(raw)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return undefined;
  }
  return { path: `${parsed.pathname}${parsed.search}`, host: hostName(parsed.host) };
}

/**
 * A path with each run of slashes made one: `//api/sessions` (a URL typed or
 * joined with one slash too many) is `/api/sessions`. Answered in place, not
 * redirected: a redirect to what a request names would let `//evil.com`
 * send a browser elsewhere (a `Location` of `//evil.com` is another host).
 */
function withSingleSlashes(pathname: string): string {
  return pathname.replace(/\/{2,}/g, '/');
}

function hostName(header: string | undefined): string {
  if (header === undefined) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  response.end(body);
}
