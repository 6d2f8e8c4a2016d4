/**
 * `type = "http"` ATIF storage: one POST per trajectory, as native sends
 * it: `application/json`, the document as the body, and its file name and
 * session id in `x-nemo-relay-atif-filename` / `x-nemo-relay-atif-session-id`.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import type { HttpStorageSettings } from '../../formats/plugins-toml/sinks.ts';
import { sendHttp } from '../delivery/http.ts';
import type { AtifDestination } from './destination.ts';
import { displayUrl } from '../../shared/secret-text.ts';

export function httpDestination(settings: HttpStorageSettings): AtifDestination {
  return {
    label: displayUrl(settings.endpoint),
    timeoutMs: settings.timeoutMillis,
    put: (upload, signal) =>
      sendHttp({
        url: settings.endpoint,
        method: 'POST',
        headers: {
          ...settings.headers,
          'content-type': 'application/json',
          'x-nemo-relay-atif-filename': upload.filename,
          'x-nemo-relay-atif-session-id': upload.sessionId,
        },
        body: Buffer.from(upload.text, 'utf8'),
        timeoutMs: settings.timeoutMillis,
        signal,
      }),
  };
}
