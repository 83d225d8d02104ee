// A certificate for 127.0.0.1 signed by a test-only CA (test/support/node/tls; the CA's key was thrown
// away once it had signed). The TLS SMTP sinks present it; `npm test` starts with NODE_EXTRA_CA_CERTS
// naming the CA, which Node reads only when a process starts, so the run trusts it for connect().
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type TestCertificate = { key: Buffer; cert: Buffer };

export function testCertificate(): TestCertificate {
  const dir = join(import.meta.dirname, 'tls');
  return { key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) };
}
