/**
 * What a sender does with a redirect (a 3xx answer with a `Location`), one
 * rule for every HTTP sender of the memory relay.
 *
 * Native, measured with a loopback receiver: its ATOF stream sinks follow a
 * 307 or 308 (the same POST, body included) up to 10 hops, and turn a 301,
 * 302 or 303 into a GET without the body, so the event is lost without a
 * word; its OTLP/HTTP exporter follows nothing (the export fails).
 *
 * Here:
 * - `follow` (stream sinks, ATIF uploads): a 307 or 308 sends the same
 *   request (method, body, headers) to the new location, at most
 *   `MAX_REDIRECTS` times, only to an `http:` or `https:` URL; credential
 *   headers (`Authorization`, `Cookie`, API keys: `isCredentialHeader`) are
 *   not sent on once the redirect leaves the origin, as HTTP clients do (nor
 *   an S3 upload's session token). A
 *   301, 302 or 303 fails the delivery, its text naming the status and the
 *   new location: re-sending the POST there as a GET without its body (what
 *   native does) would lose the event silently.
 * - `report` (OTLP): no redirect is followed, as native; the failure names
 *   the status and the location and is not retried (the same request gets
 *   the same answer).
 *
 * @module
 */

import { DestinationUnusableError } from './errors.ts';
import { displayUrl, isCredentialHeader } from '../../shared/secret-text.ts';

/** Redirects followed for one request, as native's HTTP client allows. */
export const MAX_REDIRECTS = 10;

export type RedirectPolicy = 'follow' | 'report';

/**
 * Credentials of a signed request beyond the credential headers: an S3
 * upload's temporary session token, which its signature (dropped with
 * `authorization`) was made for; another origin gets neither.
 */
const ORIGIN_BOUND = new Set(['x-amz-security-token']);

/** The statuses that redirect. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The ones that keep the method and body. */
const KEEPS_BODY = new Set([307, 308]);

/** A redirect that ended the delivery: not followed, or not followable. Not retried. */
export class RedirectError extends DestinationUnusableError {
  constructor(
    message: string,
    readonly status: number,
    /** The new location as it may be printed, when the answer gave one. */
    readonly location: string | undefined,
  ) {
    super(message);
  }
}

/** One answer of a request, and the request it answered. */
export interface RedirectAnswer {
  status: number;
  /** The answer's `Location` header, as sent. */
  location: string | undefined;
  /** The URL the request went to. */
  url: URL;
  /** The headers it was sent with. */
  headers: Record<string, string>;
  /** `POST https://…` for texts. */
  what: string;
  /** Redirects already followed for this request. */
  hops: number;
  policy: RedirectPolicy;
}

/**
 * The request to send next for a redirect: its URL and headers. A
 * `RedirectError` when the redirect ends the delivery; null when the status
 * is not a redirect (the sender's ordinary status handling applies).
 */
export function nextRequest(answer: RedirectAnswer): { url: URL; headers: Record<string, string> } | RedirectError | null {
  const { status, what } = answer;
  if (!REDIRECTS.has(status)) return null;
  let target: URL | undefined;
  try {
    target = answer.location === undefined ? undefined : new URL(answer.location, answer.url);
  } catch {
    target = undefined;
  }
  const shown = target !== undefined ? displayUrl(target.href) : answer.location !== undefined ? displayUrl(answer.location) : undefined;
  const redirected = `${what} answered HTTP ${status}, redirecting to ${shown ?? '(no usable Location)'}`;
  const fail = (why: string) => new RedirectError(`${redirected}: ${why}`, status, shown);
  if (answer.policy === 'report') return fail('not delivered; this output follows no redirect: set its URL to the new location');
  if (!KEEPS_BODY.has(status)) return fail(`not delivered; a ${status} would turn the POST into a GET without its body, so it is not followed: set the URL to the new location`);
  if (target === undefined) return fail('not delivered');
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return fail('not delivered; only http and https locations are followed');
  if (answer.hops >= MAX_REDIRECTS) return fail(`not delivered; more than ${MAX_REDIRECTS} redirects`);
  const sameOrigin = target.origin === answer.url.origin;
  const headers = sameOrigin ? answer.headers : Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !isCredentialHeader(name) && !ORIGIN_BOUND.has(name.toLowerCase())));
  return { url: target, headers };
}
