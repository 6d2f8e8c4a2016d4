/**
 * `type = "s3"` ATIF storage: a path-style `PUT /<bucket>/<key_prefix><file>`
 * signed with AWS Signature V4 (signed payload: `host;x-amz-content-sha256;
 * x-amz-date`, plus the session token when there is one), as native sends it.
 * Signing is done by the optional `aws4` package, imported the first time a
 * trajectory is uploaded.
 *
 * Credentials: `access_key_id`, the variables named by
 * `secret_access_key_var` / `session_token_var`, else the standard
 * `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`.
 * A plain-http `endpoint_url` needs `allow_http = true`.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import type { S3StorageSettings } from '../../formats/plugins-toml/sinks.ts';
import { DestinationUnusableError } from '../delivery/errors.ts';
import { sendHttp } from '../delivery/http.ts';
import type { AtifDestination } from './destination.ts';

type Sign = (request: Record<string, unknown>, credentials: Record<string, string | undefined>) => { headers: Record<string, string | number> };

let signer: Promise<Sign> | null = null;

function loadSigner(): Promise<Sign> {
  signer ??= import('aws4').then(
    (module) => {
      const aws4 = (module.default ?? module) as unknown as { sign: Sign };
      return (request, credentials) => aws4.sign(request, credentials);
    },
    (error: unknown) => {
      signer = null;
      throw new DestinationUnusableError(
        `S3 ATIF storage needs the optional "aws4" package for request signing (npm install aws4): ${error instanceof Error ? error.message : String(error)}`,
      );
    },
  );
  return signer;
}

/**
 * The object's address for `key`, path-style: the endpoint's origin and
 * the request path, written out rather than given to `URL`, which would
 * resolve a `..` segment of the key (from `key_prefix`) and send the object
 * to another bucket. Dot segments are percent-encoded: the key stays a key,
 * inside the configured bucket, as native keeps it.
 */
function s3ObjectPath(settings: S3StorageSettings, key: string): { url: URL; path: string } {
  const url = new URL(s3EndpointOf(settings));
  const prefix = url.pathname.replace(/\/+$/, '');
  const path = `${prefix}/${encodeSegment(settings.bucket)}/${key.split('/').map(encodeKeySegment).join('/')}`;
  return { url, path };
}

/** Where an S3 storage entry's requests go: its `endpoint_url`, else the region's AWS endpoint. */
export function s3EndpointOf(settings: Pick<S3StorageSettings, 'endpointUrl' | 'region'>): string {
  return settings.endpointUrl ?? `https://s3.${settings.region}.amazonaws.com`;
}

/** One segment of an object key: `.` and `..` encoded, so that nothing on the way resolves them. */
function encodeKeySegment(segment: string): string {
  return segment === '.' || segment === '..' ? segment.replaceAll('.', '%2E') : encodeSegment(segment);
}

export function s3Destination(settings: S3StorageSettings): AtifDestination {
  return {
    label: `s3://${settings.bucket}/${settings.keyPrefix}`,
    timeoutMs: settings.timeoutMillis,
    put: async (upload, signal) => {
      const { url, path } = s3ObjectPath(settings, `${settings.keyPrefix}${upload.filename}`);
      if (url.protocol === 'http:' && !settings.allowHttp) {
        throw new DestinationUnusableError(`${url.origin} is plain http; set allow_http = true on this storage entry to use it`);
      }
      if (settings.accessKeyId === undefined || settings.secretAccessKey === undefined) {
        throw new DestinationUnusableError(`S3 bucket ${settings.bucket}: no credentials (access_key_id and secret_access_key_var, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`);
      }
      const body = Buffer.from(upload.text, 'utf8');
      const sign = await loadSigner();
      const signed = sign(
        {
          service: 's3',
          region: settings.region,
          method: 'PUT',
          host: url.host,
          path,
          body,
          headers: {},
          // Native signs only host, the payload hash and the date (plus a session token).
          extraHeadersToIgnore: { 'content-type': true, 'content-length': true },
        },
        {
          accessKeyId: settings.accessKeyId,
          secretAccessKey: settings.secretAccessKey,
          ...(settings.sessionToken !== undefined ? { sessionToken: settings.sessionToken } : {}),
        },
      );
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(signed.headers)) {
        // fetch sets these itself (host and length are forbidden to set); native sends no content-type.
        if (/^(host|content-length|content-type)$/i.test(name)) continue;
        headers[name.toLowerCase()] = String(value);
      }
      await sendHttp({ url: `${url.origin}${path}`, path, method: 'PUT', headers, body, timeoutMs: settings.timeoutMillis, signal });
    },
  };
}

/** RFC 3986 encoding of one path segment, as SigV4 canonicalizes S3 keys. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
