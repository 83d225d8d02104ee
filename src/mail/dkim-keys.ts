// A domain's DKIM key pair: made in the Worker (WebCrypto, RSA 2048), the public half published as a TXT
// record, the private half stored sealed (AES-GCM under a key derived from the DKIM_KEY_SECRET secret) and
// opened once per isolate.
import { toBase64 } from '../base64';
import { OpenedOnce, type SealPurpose, seal, unseal } from '../sealed';

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const PURPOSE: SealPurpose = { info: 'postcode dkim key', name: 'DKIM key' };

/** A new key pair: the public key's SPKI in base64 (the record's `p=`) and the private key sealed. */
export async function newDkimKeyPair(secret: string): Promise<{ publicKey: string; sealedPrivateKey: string }> {
  const pair = (await crypto.subtle.generateKey(
    { ...RSA, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer;
  const pkcs8 = (await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer;
  return { publicKey: toBase64(spki), sealedPrivateKey: await seal(new Uint8Array(pkcs8), secret, PURPOSE) };
}

/** The TXT record a domain publishes at `<selector>._domainkey.<domain>`. */
export const dkimRecordValue = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;

/** Opened private keys by sealed text: importing a key costs more than a signature, so an isolate does it once. */
const opened = new OpenedOnce<CryptoKey>(256);

/** The signing key in `sealed`; rejects when the secret is not the one that sealed it or the text is not ours. */
export const openPrivateKey = (sealed: string, secret: string): Promise<CryptoKey> =>
  opened.get(`${secret}\u0000${sealed}`, async () =>
    crypto.subtle.importKey('pkcs8', await unseal(sealed, secret, PURPOSE), RSA, false, ['sign']),
  );
