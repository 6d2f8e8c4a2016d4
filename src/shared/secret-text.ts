/**
 * Secrets as they may be shown. URLs: in `status().outputs`, errors, logs and
 * `doctor`. A destination URL can carry a password (`user:pass@host`) or a
 * token in its query; neither is ever printed. The URL itself (with its
 * credentials) is still what requests are sent to.
 *
 * @module
 */

/**
 * Header names that carry credentials (lower-case). The plugin drops them from
 * every `headers` value it records, and native's response cache refuses to fold
 * them into a cache key (it names the same eight).
 */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'anthropic-api-key', 'cookie', 'set-cookie']);

/** True for a header name that carries credentials, in any case. */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name.toLowerCase());
}

/** Query parameters whose values are credentials by their whole name (compared lower-case, `-` and `_` ignored). */
const SECRET_QUERY_KEYS = new Set(['key', 'auth', 'authorization', 'sig', 'code']);

/**
 * `url` with its password (and a user name that came with one) and
 * credential-like query values replaced by `***`. Text that is not a URL
 * is returned with anything between `//` and `@` masked, so a malformed
 * URL with a password cannot slip through either.
 */
export function displayUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/[^/@\s]*@/, '//***@');
  }
  if (parsed.username === '' && parsed.password === '' && !hasSecretQuery(parsed)) return url;
  if (parsed.password !== '') {
    parsed.username = '***';
    parsed.password = '';
  } else if (parsed.username !== '') {
    parsed.username = '***';
  }
  for (const key of [...parsed.searchParams.keys()]) {
    if (isSecretKey(key)) parsed.searchParams.set(key, '***');
  }
  return parsed.href.replaceAll('%2A%2A%2A', '***');
}

function hasSecretQuery(url: URL): boolean {
  for (const key of url.searchParams.keys()) if (isSecretKey(key)) return true;
  return false;
}

/**
 * Words that make any query parameter holding them a credential (`token`,
 * `access_token`, `X-Amz-Signature`, `X-Amz-Credential`, ...): services
 * name theirs freely (`client_secret`, `private_token`, `refresh_token`,
 * `x-api-key`, `db_password`), so a fixed list of names let them print.
 */
const SECRET_QUERY_WORDS = /token|secret|passw|apikey|signature|credential/;

function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_]/g, '');
  return SECRET_QUERY_KEYS.has(name) || SECRET_QUERY_WORDS.test(name);
}

/** A URL inside free text: a scheme, `://`, then up to a space, a quote or a bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()[\]{}]+/gi;

/**
 * `text` with each URL in it shown as `displayUrl` shows it: a runtime's or a library's own error text quotes the URL
 * it was given (Bun's WebSocket: "WebSocket connection to 'wss://host/stream?token=…' failed"), and that text is
 * printed in `lastError` and warnings.
 */
export function withoutUrlSecrets(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (match) => {
    // Punctuation that ends the sentence is not the URL's ("failed to reach https://host/x?token=…: refused").
    const url = match.replace(/[.,:;!?]+$/, '');
    return displayUrl(url) + match.slice(url.length);
  });
}

/** Shorter values are not masked in text: not credentials, and masking them would garble the message (`x-fail = "1"`). */
const MIN_MASKED_VALUE = 6;

/**
 * `text` with each of `values` (a destination's configured header values)
 * replaced by `***`, whole and, for a `<scheme> <credential>` value
 * (`Bearer ...`, `Basic ...`), its credential alone: a receiver's own error
 * text can quote what it was sent (a gRPC collector's "bad token Bearer
 * ..."), and that text is printed in `lastError` and warnings.
 */
export function withoutValues(text: string, values: Iterable<string>): string {
  const secrets = new Set<string>();
  for (const value of values) {
    const trimmed = value.trim();
    secrets.add(trimmed);
    const credential = /^[A-Za-z][\w-]*\s+(\S+)$/.exec(trimmed)?.[1];
    if (credential !== undefined) secrets.add(credential);
  }
  // Longest first, so a whole value is masked before its credential part.
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_MASKED_VALUE) out = out.replaceAll(secret, '***');
  }
  return out;
}

/**
 * The header values a configuration document holds: under every `headers`
 * key, a table's values, or the value itself when it was written as one
 * string (`headers = "authorization=Bearer ..."`, the form of
 * `OTEL_EXPORTER_OTLP_HEADERS`). For `withoutValues` over messages that may
 * quote the document (native's refusal of a wrongly typed value).
 */
export function configuredHeaderValues(document: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (typeof value !== 'object' || value === null || depth > 32) return;
    for (const [key, item] of Object.entries(value)) {
      if (key.toLowerCase() === 'headers') {
        if (typeof item === 'string' || typeof item === 'number') out.push(String(item));
        else if (typeof item === 'object' && item !== null) {
          for (const entry of Object.values(item)) if (typeof entry === 'string' || typeof entry === 'number') out.push(String(entry));
        }
      } else {
        walk(item, depth + 1);
      }
    }
  };
  walk(document, 0);
  return out;
}

/**
 * A configuration value as `doctor` and diagnostics may print it: a header
 * list (`key=value,...`, variables named `*HEADERS`) keeps its keys and
 * loses its values; a URL loses its credentials; anything else is shown.
 */
export function displaySettingValue(name: string, value: string): string {
  if (/HEADERS$/i.test(name)) {
    return value
      .split(',')
      .map((item) => {
        const at = item.indexOf('=');
        return at <= 0 ? '***' : `${item.slice(0, at).trim()}=***`;
      })
      .join(',');
  }
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim()) ? displayUrl(value.trim()) : value;
}
