/**
 * The user name and password written in a destination's URL
 * (`https://user:password@host/…`), as native sends them.
 *
 * Measured on native (nemo-relay-node, reqwest): an HTTP request to such a
 * URL carries them as `Authorization: Basic` (percent-decoded), and the
 * URL it goes to has none. Its ATOF stream sinks (`http_post`, `ndjson`)
 * send that header *instead of* a configured `authorization` (`headers` or
 * `header_env`); its ATIF upload sends both headers, which HTTP does not
 * allow for `Authorization`, so here the URL's replaces the configured one
 * on every HTTP sender (docs/operators/streams.md says so). The WebSocket
 * transport and OTLP send no URL credentials on native, nor here
 * (`withoutUserinfo`).
 *
 * Applied by the senders themselves rather than left to `node:http` (which
 * adds the URL's only when no `authorization` is configured, and not at all
 * through a proxy): one rule, whatever the route.
 *
 * @module
 */

import { Buffer } from 'node:buffer';

/** `Basic …` for the URL's user name and password, or undefined when it has neither. */
export function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  return `Basic ${Buffer.from(`${safeDecode(url.username)}:${safeDecode(url.password)}`, 'utf8').toString('base64')}`;
}

/** The same URL without a user name or password. */
export function withoutUserinfo(url: URL): URL {
  if (url.username === '' && url.password === '') return url;
  const bare = new URL(url.href);
  bare.username = '';
  bare.password = '';
  return bare;
}

/**
 * The request an HTTP sender makes to `url` with `headers`: the URL without
 * its userinfo, and the headers with the userinfo as `authorization`
 * (replacing a configured one, in whatever case it was written).
 */
export function withUrlCredentials(url: URL, headers: Record<string, string>): { url: URL; headers: Record<string, string> } {
  const authorization = basicAuthorization(url);
  if (authorization === undefined) return { url, headers };
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
  return { url: withoutUserinfo(url), headers: { ...kept, authorization } };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
