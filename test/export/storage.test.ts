// ATIF storage against a real loopback receiver: the HTTP upload and its
// x-nemo-relay-atif-* headers, the S3 PUT (path style, SigV4 checked by the
// receiver with aws4), and the local recovery copy when an upload fails.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAtifStorage, type AtifUpload } from '../../src/export/storage/storage.ts';
import type { HttpStorageSettings, S3StorageSettings } from '../../src/formats/plugins-toml/sinks.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { writeFileAtomic } from '../../src/shared/atomic-file.ts';
import { tempDir } from '../contract/backends.ts';
import { startReceiver, type Receiver } from '../support/receivers.ts';

const CREDENTIALS = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret/with+chars', region: 'eu-west-3' };
const RETRY = { initialDelayMs: 5, maxDelayMs: 20, maxRetries: 2 };
const DOC: AtifUpload = { filename: 'trajectory-0191.json', sessionId: '0191-root', text: '{\n  "schema_version": "ATIF-v1.7",\n  "note": "é"\n}' };

let receiver: Receiver;
let dir: string;
beforeEach(async () => {
  receiver = await startReceiver({ s3: CREDENTIALS });
  dir = tempDir('storage');
});
afterEach(async () => {
  await receiver.close();
});

const http = (overrides: Partial<HttpStorageSettings> = {}): HttpStorageSettings => ({
  type: 'http',
  index: 0,
  endpoint: `${receiver.origin}/atif/upload`,
  headers: { 'x-probe': 'atif' },
  timeoutMillis: 2000,
  ...overrides,
});
const s3 = (overrides: Partial<S3StorageSettings> = {}): S3StorageSettings => ({
  type: 's3',
  index: 1,
  bucket: 'probe-bucket',
  keyPrefix: 'trajectories/',
  region: CREDENTIALS.region,
  endpointUrl: receiver.origin,
  allowHttp: true,
  accessKeyId: CREDENTIALS.accessKeyId,
  secretAccessKey: CREDENTIALS.secretAccessKey,
  sessionToken: undefined,
  timeoutMillis: 2000,
  ...overrides,
});

function keeper() {
  const kept: string[] = [];
  return {
    kept,
    keepRecoveryCopy: (upload: AtifUpload) => {
      const target = path.join(dir, upload.filename);
      writeFileAtomic(target, upload.text, { mode: 0o600 });
      kept.push(target);
      return target;
    },
  };
}

describe('ATIF storage', () => {
  it('POSTs the document as application/json with its file name and session id headers', async () => {
    const recovery = keeper();
    const storage = createAtifStorage([http()], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/atif/upload', body: DOC.text });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-nemo-relay-atif-filename': 'trajectory-0191.json',
      'x-nemo-relay-atif-session-id': '0191-root',
      'x-probe': 'atif',
      'content-length': String(Buffer.byteLength(DOC.text)),
    });
    expect(recovery.kept).toEqual([]);
    expect(storage.health()).toMatchObject([{ kind: 'atif-storage', path: `${receiver.origin}/atif/upload`, sent: 1, failed: 0, dropped: 0 }]);
  });

  it('PUTs to S3 path-style under the key prefix, signed with SigV4 over host, payload hash and date', async () => {
    const storage = createAtifStorage([s3()], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: keeper().keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(receiver.requests).toHaveLength(1);
    const [put] = receiver.requests;
    expect(put).toMatchObject({ method: 'PUT', path: '/probe-bucket/trajectories/trajectory-0191.json', body: DOC.text, signatureValid: true });
    expect(put!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-3\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=/,
    );
    expect(put!.headers['content-type']).toBeUndefined();
    expect(storage.health()).toMatchObject([{ kind: 'atif-storage', path: 's3://probe-bucket/trajectories/', sent: 1 }]);
  });

  it('a key_prefix with .. segments stays a key in the configured bucket (issue 23 item 12)', async () => {
    const storage = createAtifStorage([s3({ keyPrefix: '../other-bucket/./x/' })], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: keeper().keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(receiver.requests).toHaveLength(1);
    const [put] = receiver.requests;
    // Not /other-bucket/...: the dot segments travel encoded, and the signature covers the path as sent.
    expect(put).toMatchObject({ method: 'PUT', path: '/probe-bucket/%2E%2E/other-bucket/%2E/x/trajectory-0191.json', signatureValid: true });
    expect(storage.health()).toMatchObject([{ kind: 'atif-storage', sent: 1, failed: 0 }]);
  });

  it('a receiver that checks signatures refuses a PUT signed with the wrong secret', async () => {
    receiver.script('/probe-bucket/trajectories/trajectory-0191.json', [{ status: 403 }]);
    const storage = createAtifStorage([s3({ secretAccessKey: 'wrong' })], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: keeper().keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(receiver.requests[0]!.signatureValid).toBe(false);
  });

  it('refuses a plain-http S3 endpoint without allow_http, and keeps the trajectory locally', async () => {
    const recovery = keeper();
    const storage = createAtifStorage([s3({ allowHttp: false })], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(receiver.requests).toEqual([]);
    const [health] = storage.health();
    expect(health).toMatchObject({ sent: 0, failed: 1, recoveryPath: path.join(dir, DOC.filename) });
    expect(health!.lastError).toContain('allow_http');
  });

  it('retries a 503 and then delivers, without a recovery copy', async () => {
    receiver.script('/atif/upload', [{ status: 503, headers: { 'retry-after': '0' } }]);
    const recovery = keeper();
    const storage = createAtifStorage([http()], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    expect(await storage.flush(5000)).toBe(true);
    await storage.close();
    expect(receiver.requests).toHaveLength(2);
    expect(recovery.kept).toEqual([]);
    expect(storage.health()[0]).toMatchObject({ sent: 1, failed: 0, errors: 1 });
  });

  it('keeps one owner-only local copy when one destination fails for good, and names it in that destination only', async () => {
    receiver.script('/atif/upload', [{ status: 500 }]);
    const recovery = keeper();
    const storage = createAtifStorage([http(), s3()], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close();
    expect(recovery.kept).toEqual([path.join(dir, DOC.filename)]);
    expect(fs.readFileSync(recovery.kept[0]!, 'utf8')).toBe(DOC.text);
    if (process.platform !== 'win32') expect(fs.statSync(recovery.kept[0]!).mode & 0o777).toBe(0o600);
    const [web, bucket] = storage.health();
    expect(web).toMatchObject({ sent: 0, failed: 1, recoveryPath: recovery.kept[0] });
    expect(bucket).toMatchObject({ sent: 1, failed: 0 });
    expect(bucket!.recoveryPath).toBeUndefined();
  });

  it('an upload still pending when close() runs out of time is dropped, counted and kept locally', async () => {
    receiver.hang('/atif/upload');
    const recovery = keeper();
    const storage = createAtifStorage([http({ timeoutMillis: 60_000 })], { logger: silentLogger, retry: RETRY, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    await storage.close(200);
    expect(storage.health()[0]).toMatchObject({ sent: 0, dropped: 1, recoveryPath: path.join(dir, DOC.filename) });
    expect(recovery.kept).toHaveLength(1);
  });

  // On native the adapter's uploads are given up by the shutdown's budget or
  // the process exit while a 429's Retry-After holds them: the warning and
  // lastError said only "shutdown ran out of time", not what the receiver did.
  it('an upload given up while it waits out a refusal names the destination\'s last answer', async () => {
    receiver.script('/atif/upload', [{ status: 429, headers: { 'retry-after': '30' } }]);
    const recovery = keeper();
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const storage = createAtifStorage([http()], { logger, retry: { initialDelayMs: 5, maxDelayMs: 60_000, maxRetries: 4 }, keepRecoveryCopy: recovery.keepRecoveryCopy });
    storage.upload(DOC);
    await receiver.waitFor('/atif/upload', 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    storage.abandon('shutdown ran out of time');
    const health = storage.health()[0]!;
    expect(health).toMatchObject({ sent: 0, dropped: 1, recoveryPath: path.join(dir, DOC.filename) });
    expect(health.lastError).toBe(`shutdown ran out of time (last error: POST ${receiver.origin}/atif/upload answered HTTP 429)`);
    expect(warnings.join('\n')).toContain('answered HTTP 429');
    expect(receiver.requests).toHaveLength(1);
  });
});
