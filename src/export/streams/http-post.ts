/**
 * `transport = "http_post"`: one POST per event, the event as one NDJSON
 * line (`application/x-ndjson`, ending in a newline), as native sends it.
 *
 * @module
 */

import { sendHttp } from '../delivery/http.ts';
import type { StreamTransportImpl } from './transport.ts';

export function httpPostTransport(url: string, headers: Record<string, string>, timeoutMs: number): StreamTransportImpl {
  const all = { 'content-type': 'application/x-ndjson', ...headers };
  return {
    send: (line, signal) => sendHttp({ url, method: 'POST', headers: all, body: `${line}\n`, timeoutMs, signal }),
    close: async () => {},
    // Each attempt ends with its own request (aborted through the queue's signal).
    destroy: () => {},
  };
}
