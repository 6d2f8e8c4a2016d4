/**
 * Why one delivery attempt failed, one class per kind, so that the queue
 * can tell a failure worth retrying from one that will not get better.
 *
 * @module
 */

import { withoutUrlSecrets } from '../../shared/secret-text.ts';

/** Base class: every failed attempt the delivery layer reports. */
export abstract class DeliveryError extends Error {
  /** True when the same request may succeed later (busy, unreachable). */
  abstract readonly retryable: boolean;
  /** The destination's own wait hint (`Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.name = new.target.name;
    this.retryAfterMs = retryAfterMs;
  }
}

/** HTTP status codes that mean "try again later": throttled or a gateway in trouble. */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/** The destination answered with a non-success status. */
export class HttpStatusError extends DeliveryError {
  readonly retryable: boolean;

  constructor(
    readonly status: number,
    destination: string,
    retryAfterMs?: number,
    /** How to fix it, when the answer says (a proxy's 407). */
    hint = '',
  ) {
    super(`${destination} answered HTTP ${status}${hint === '' ? '' : ` (${hint})`}`, retryAfterMs);
    this.retryable = RETRYABLE_STATUS.has(status);
  }
}

/**
 * The destination refused the request for its size (HTTP 413, gRPC
 * RESOURCE_EXHAUSTED for a message over its limit): the same bytes will be
 * refused again, but fewer items in a smaller request may pass.
 */
export class RequestTooLargeError extends DeliveryError {
  readonly retryable = false;

  constructor(
    message: string,
    /** The encoded request that was refused. */
    readonly requestBytes: number,
    /** The destination's limit, when its answer named it. */
    readonly limitBytes?: number,
  ) {
    super(message);
  }
}

/** The connection could not be made or broke (refused, reset, DNS). */
export class ConnectionFailedError extends DeliveryError {
  readonly retryable = true;
}

/** The destination did not answer within the configured timeout. */
export class DeliveryTimeoutError extends DeliveryError {
  readonly retryable = true;
}

/** The destination cannot be used at all (bad URL, missing library, refused upgrade). */
export class DestinationUnusableError extends DeliveryError {
  readonly retryable = false;
}

/** The output was closed before the item could be tried (or tried again). */
export class DeliveryClosedError extends DeliveryError {
  readonly retryable = false;
}

/**
 * OpenSSL's codes and texts (and Deno's, Bun's) for a certificate the client
 * does not trust; the texts are what grpc-js reports, inside its UNAVAILABLE.
 */
const UNTRUSTED = /UNABLE[_ ]TO[_ ]VERIFY|SELF[-_ ]SIGNED|UNABLE[_ ]TO[_ ]GET[_ ](?:LOCAL[_ ])?ISSUER|CERT_UNTRUSTED|UnknownIssuer|unknown ?issuer|invalid peer certificate/i;

/** Whether `error` is a destination's certificate the client does not trust. */
export function isUntrustedCertificate(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null | undefined)?.code ?? '');
  const message = error instanceof Error ? error.message : '';
  return UNTRUSTED.test(code) || UNTRUSTED.test(message);
}

/**
 * A failed connection, as the error the queues read. Not retried: one the
 * runtime itself refused to open (Deno without `--allow-net`: `NotCapable`,
 * `PermissionDenied` before Deno 2), and one whose certificate the host does
 * not trust. Either fails the same way until someone changes the host, and
 * retrying held a host's shutdown for its whole budget, then counted the
 * items as dropped instead of failed.
 */
export function connectionFailure(message: string, error: unknown): DeliveryError {
  const name = (error as { name?: unknown } | null | undefined)?.name;
  const lasting = name === 'NotCapable' || name === 'PermissionDenied' || isUntrustedCertificate(error);
  return lasting ? new DestinationUnusableError(message) : new ConnectionFailedError(message);
}

/** Text for `lastError` from anything thrown. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    // The message is ours (its addresses already shown without credentials); a cause's is the runtime's or a
    // library's, which may quote the URL it was given, credentials and all.
    const detail = cause instanceof Error && cause.message && !error.message.includes(cause.message) ? ` (${withoutUrlSecrets(cause.message)})` : '';
    return `${error.message}${detail}`;
  }
  return withoutUrlSecrets(String(error));
}
