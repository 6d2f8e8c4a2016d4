// A self-signed certificate for 127.0.0.1, for loopback TLS servers in tests:
// made with openssl, so a test that needs one is skipped (saying why) where
// openssl is missing.
import { execFileSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
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

/** A certificate authority of its own and a server certificate it signed for 127.0.0.1 and localhost. */
export interface LoopbackAuthority {
  /** The CA's certificate file (PEM), what a client is told to trust. */
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

/** A CA and a server certificate signed by it, written in `dir`; undefined (said on the console, with `who` asking) where openssl cannot make them. */
export function loopbackAuthority(dir: string, who: string): LoopbackAuthority | undefined {
  const file = (name: string) => path.join(dir, name);
  const extensions = file('server.ext');
  fs.writeFileSync(extensions, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  try {
    const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
    run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca-key.pem'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=nrh test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server-key.pem'), '-out', file('server.csr'), '-subj', '/CN=localhost']);
    run(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca-key.pem'), '-CAcreateserial', '-out', file('server.pem'), '-days', '1', '-extfile', extensions]);
  } catch (error) {
    console.log(`${who}: skipped, openssl could not make a CA and a certificate for a loopback TLS server (${String(error)}); install openssl`);
    return undefined;
  }
  return { caFile: file('ca.pem'), key: readFileSync(file('server-key.pem')), cert: readFileSync(file('server.pem')) };
}
