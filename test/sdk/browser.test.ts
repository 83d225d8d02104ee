// `postcode/browser` (sdk/src/browser.ts): instant OTP with a public token only; a server key is refused before any
// request, so it cannot end up in a page's bundle working.
import { describe, expect, it } from 'vitest';
import { createOtpClient } from '../../sdk/src/browser';
import { codeFromInbox, newAccount, uniqueAddress } from '../support/api';
import { BASE_URL, faultyFetch, workerFetch } from './support';

describe('createOtpClient', () => {
  it('reads the config, sends, verifies with a public token', async () => {
    const { publicToken } = await newAccount('sdk browser');
    const otp = createOtpClient({ token: publicToken, baseUrl: BASE_URL, fetch: workerFetch });
    expect((await otp.config()).data).toMatchObject({ turnstile: null, codeLength: 6 });
    const email = uniqueAddress('sdk-browser');
    const sent = await otp.send({ email });
    expect(sent.error).toBeNull();
    const code = await codeFromInbox(email);
    const verified = await otp.verify({ sessionId: sent.data!.sessionId, email, code });
    expect(verified.data).toEqual({ verified: true });
  });

  it('refuses a server key or no token; a 429 comes back at once with its wait (the page shows it)', async () => {
    const { serverKey, publicToken } = await newAccount('sdk browser keys');
    expect(() => createOtpClient({ token: serverKey, baseUrl: BASE_URL })).toThrow(/public OTP token/);
    expect(() => createOtpClient({ token: '', baseUrl: BASE_URL })).toThrow(/public OTP token/);
    const { fetch, calls } = faultyFetch([{ retryAfter: 30 }]);
    const otp = createOtpClient({ token: publicToken, baseUrl: BASE_URL, fetch });
    const refused = await otp.send({ email: uniqueAddress('sdk-browser-wait') });
    expect(refused.error).toMatchObject({ status: 429, retryAfterSeconds: 30 });
    expect(calls).toHaveLength(1);
  });
});
