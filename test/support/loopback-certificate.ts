// A self-signed certificate for 127.0.0.1, for loopback TLS servers in tests:
// made with openssl, so a test that needs one is skipped (saying why) where
// openssl is missing.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A self-signed certificate for 127.0.0.1 written in `dir`; undefined (said on the console, with `who` asking) where openssl cannot make one. */
export function loopbackCertificate(dir: string, who: string): { key: Buffer; cert: Buffer } | undefined {
  const key = path.join(dir, 'loopback-key.pem');
  const cert = path.join(dir, 'loopback-cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  } catch (error) {
    console.log(`${who}: skipped, openssl could not make a certificate for a loopback TLS server (${String(error)}); install openssl`);
    return undefined;
  }
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
