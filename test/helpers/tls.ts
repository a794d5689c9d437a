import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A throwaway self-signed certificate for `name` (and 127.0.0.1), made now with
 * openssl: no trust store knows it, unlike test/fixtures/tls (trusted through
 * NODE_EXTRA_CA_CERTS). For proving that an untrusted certificate fails.
 */
export async function untrustedCertificate(name = 'hooks.valise.test'): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = await mkdtemp(join(tmpdir(), 'valise-untrusted-'));
  try {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    await run(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
        ...['-keyout', key, '-out', cert, '-subj', `/CN=${name}`],
        ...['-addext', `subjectAltName=DNS:${name},IP:127.0.0.1`],
      ],
      { timeout: 20_000 },
    );
    return { key: await readFile(key), cert: await readFile(cert) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
