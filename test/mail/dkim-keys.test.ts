// A domain's DKIM keys (src/mail/dkim-keys.ts): made in the Worker, sealed at rest, opened to sign mail that
// a verifier postcode did not write accepts against the published record.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/base64';
import { bodyHash, dkimSignature } from '../../src/mail/dkim';
import { dkimRecordValue, newDkimKeyPair, openPrivateKey } from '../../src/mail/dkim-keys';

const SECRET = 'test-dkim-secret-0123456789abcdef';

describe('DKIM key pairs', () => {
  it('are RSA 2048; the record carries the public key; the sealed private key opens and signs', async () => {
    const { publicKey, sealedPrivateKey } = await newDkimKeyPair(SECRET);
    const spki = fromBase64(publicKey);
    const imported = await crypto.subtle.importKey('spki', spki, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, [
      'verify',
    ]);
    expect((imported.algorithm as { modulusLength: number }).modulusLength).toBe(2048);
    expect(dkimRecordValue(publicKey)).toBe(`v=DKIM1; k=rsa; p=${publicKey}`);

    const domain = 'keys.example';
    const privateKey = await openPrivateKey(sealedPrivateKey, SECRET);
    const headers = `From: a@${domain}\r\nTo: b@example.com\r\nSubject: Sealed\r\nDate: ${new Date().toUTCString()}\r\n`;
    const body = 'Signed with a key that was sealed at rest.\r\n';
    const signature = await dkimSignature({ domain, selector: 's1', privateKey }, headers, await bodyHash([body]));
    const res = await fetch(`${env.DKIM_VERIFIER_URL}/verify`, {
      method: 'POST',
      body: JSON.stringify({
        message: `${signature}\r\n${headers}\r\n${body}`,
        records: { [`s1._domainkey.${domain}`]: dkimRecordValue(publicKey) },
      }),
    });
    expect(((await res.json()) as { results: { result: string }[] }).results).toMatchObject([{ result: 'pass' }]);
  });

  it('sealed: no plain key in the text, a fresh IV each time, and nothing opens without the same secret', async () => {
    const { sealedPrivateKey } = await newDkimKeyPair(SECRET);
    expect(sealedPrivateKey).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    // PKCS#8 of an RSA key starts with these bytes (SEQUENCE, version 0, rsaEncryption): never in the clear.
    expect(sealedPrivateKey).not.toContain('MIIE');
    const second = await newDkimKeyPair(SECRET);
    expect(second.sealedPrivateKey.split('.')[1]).not.toBe(sealedPrivateKey.split('.')[1]);

    await expect(openPrivateKey(sealedPrivateKey, 'another-secret')).rejects.toThrow();
    const [version, iv, data] = sealedPrivateKey.split('.');
    const flipped = `${data!.slice(0, 10)}${data![10] === 'A' ? 'B' : 'A'}${data!.slice(11)}`;
    await expect(openPrivateKey(`${version}.${iv}.${flipped}`, SECRET)).rejects.toThrow();
    await expect(openPrivateKey('not sealed', SECRET)).rejects.toThrow('not a sealed DKIM key');
    // A failed open is not remembered: the right secret still opens the key.
    await expect(openPrivateKey(sealedPrivateKey, SECRET)).resolves.toBeDefined();
  });
});
