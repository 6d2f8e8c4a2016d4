/**
 * What a remote destination's URL and header values must be for a request
 * to go out at all: checked once, when the configuration is read, so that a
 * destination that could never send is reported with its reason instead of
 * failing every request later with nothing saying why. Messages never quote
 * a header value (it is often a credential).
 *
 * @module
 */

/** An HTTP header name (RFC 9110 token characters, at least one), as native's HTTP stack parses one. */
export function isHeaderName(name: string): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name);
}

/** A header name as native compares names: ASCII letters lower-cased, nothing else changed (`K` is no `k`). */
export function headerKey(name: string): string {
  return name.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/**
 * Whether native's HTTP stack refuses `value` as a header value: a control
 * character other than tab, or DEL. Characters past ASCII are not refused
 * there (native sends their UTF-8 bytes).
 */
export function isInvalidHeaderValue(value: string): boolean {
  return /[\u0000-\u0008\u000a-\u001f\u007f]/.test(value);
}

/**
 * Why `value` cannot be sent as a header value, or null when it can.
 * Control characters (CR/LF included) are refused by every HTTP stack
 * (native too); characters past Latin-1 (`é` passes, `€` and emoji do not)
 * are refused by Node's, Bun's and Deno's HTTP clients.
 */
export function headerValueProblem(value: string): string | null {
  if (isInvalidHeaderValue(value)) return 'contains a control character (a line break, say), which no HTTP request can carry';
  if (/[^\u0000-\u00ff]/.test(value)) return 'contains characters outside Latin-1, which HTTP clients refuse to send (percent-encode them, or send them in the body)';
  return null;
}

/**
 * Why `text` cannot be a destination URL with one of `schemes` (e.g.
 * `['http:', 'https:']`), or null when it can: it must parse, use one of the
 * schemes, name a host, and not name port 0 (which `node:http` reads as
 * "the default port" and sends to 80).
 */
export function destinationUrlProblem(text: string, schemes: readonly string[]): string | null {
  let url: URL;
  try {
    // Not trimmed: the URL parser strips C0 controls and spaces at the edges itself, as Rust's url crate does.
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (!schemes.includes(url.protocol)) return `must use ${schemes.map((s) => s.replace(/:$/, '')).join(' or ')}, not ${url.protocol.replace(/:$/, '')}`;
  if (url.hostname === '') return 'names no host';
  if (url.port === '0') return 'names port 0, which no destination listens on';
  return null;
}

/**
 * Whether a URL's host, as the WHATWG parser gives it (lower-cased, an IP
 * address in its normal form: `127.1` is `127.0.0.1`), is this machine's
 * loopback as native 0.9.2 counts it: `localhost`, an IPv4 address in
 * 127.0.0.0/8, or `[::1]`. Not `localhost.`, `foo.localhost`, `0.0.0.0`,
 * `[::]` nor `[::ffff:127.0.0.1]` (measured).
 */
export function isLoopbackHost(hostname: string): boolean {
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i.test(hostname);
}

/**
 * Whether native refuses `text` as an OpenTelemetry trace endpoint because
 * it would carry the traces in plain text off this machine: `http://` to a
 * host that is not loopback (`isLoopbackHost`). A Kubernetes collector's
 * `http://otel-collector:4318` is one. Native then sends no trace to it,
 * while a log destination on such a URL is not refused.
 */
export function isPlaintextRemote(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
}
