/**
 * A certificate authority made for one test with the openssl binary, as an operator makes a
 * private one, and a server certificate it signed for 127.0.0.1 and localhost: a TLS server on
 * loopback that a client trusts only when it is given `caFile`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificate {
  /** the CA's certificate (PEM): what GIT_SSL_CAINFO, curl --cacert or NODE_EXTRA_CA_CERTS take */
  caFile: string;
  /** the server's key and certificate (PEM) */
  key: string;
  cert: string;
}

/** Makes the CA and the server certificate in `dir` (created when missing); both last a day. */
export async function makeTestCertificate(dir: string): Promise<TestCertificate> {
  mkdirSync(dir, { recursive: true });
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1', '-subj', '/CN=flowgate test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  await openssl('req', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(at('server.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '1',
    '-extfile', at('server.ext'), '-out', at('server.pem'));
  return { caFile: at('ca.pem'), key: readFileSync(at('server.key'), 'utf8'), cert: readFileSync(at('server.pem'), 'utf8') };
}
