// A public token's send policy (issue: "Caps that follow the target"): sub-addresses and disposable-address domains
// refused with 403 ADDRESS_NOT_ALLOWED before anything is mailed, and a cap on codes per recipient domain per hour
// (429 OTP_RATE_LIMITED), on instant sends and the legacy alias; a server key is never subject to it.
import { describe, expect, it } from 'vitest';
import { admin, call, expectError, inbox, newAccount, uniqueAddress, waitForInbox } from '../../support/api';
import { expectRetryAfter, INSTANT, LEGACY, send, sendAndRead } from '../../support/public-otp';
import type { OtpSendPolicy, OtpToken } from '../../support/responses';

/** A new account and a public token of it with `policy`. */
async function tokenWith(policy: Partial<OtpSendPolicy>) {
  const account = await newAccount();
  const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${account.accountId}/otp-tokens`, { policy });
  expect(res.status).toBe(201);
  return { ...account, token: res.json.data.token, tokenId: res.json.data.id };
}

/** Nothing was mailed to `email` (a refused send never reaches SMTP). */
async function expectNothingMailed(email: string) {
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await inbox(email)).toHaveLength(0);
}

/** An address at a domain of its own, so each test counts its own domain. */
const atDomain = (domain: string, local = crypto.randomUUID().slice(0, 8)) => `${local}@${domain}`;
const newDomain = () => `${crypto.randomUUID().slice(0, 12)}.example.net`;

describe("a public token's send policy", () => {
  it('blockSubaddresses: ada+x@ → 403 ADDRESS_NOT_ALLOWED on both send routes, nothing mailed; ada@ goes', async () => {
    const { token } = await tokenWith({ blockSubaddresses: true });
    const plain = uniqueAddress('policy');
    const tagged = plain.replace('@', '+promo@');
    for (const path of [INSTANT.send, LEGACY.send]) {
      const refused = await send(token, { email: tagged }, undefined, path);
      expectError(refused, 403, 'ADDRESS_NOT_ALLOWED');
      expect(refused.json.error.message).toContain('sub-addresses');
    }
    await expectNothingMailed(tagged);
    expect((await send(token, { email: plain })).status).toBe(200);
  });

  it('blockDisposable: a listed domain and its subdomains → 403; a server key of the account is not subject to it', async () => {
    const { token, serverKey } = await tokenWith({ blockDisposable: true });
    for (const email of [atDomain('mailinator.com'), atDomain('inbox.Mailinator.com'), atDomain('yopmail.com')]) {
      const refused = await send(token, { email });
      expectError(refused, 403, 'ADDRESS_NOT_ALLOWED');
      expect(refused.json.error.message).toContain('disposable');
    }
    expect((await send(token, { email: uniqueAddress('policy') })).status).toBe(200);
    expect((await send(serverKey, { email: atDomain('mailinator.com') })).status).toBe(200);
  });

  it('domainSendsPerHour: 3 → a loop walking one domain is capped at 3 an hour while another domain goes through', async () => {
    const { token, serverKey } = await tokenWith({ domainSendsPerHour: 3 });
    const domain = newDomain();
    const walked = Array.from({ length: 3 }, () => atDomain(domain));
    for (const email of walked) expect((await send(token, { email })).status).toBe(200);
    for (const path of [INSTANT.send, LEGACY.send]) {
      const capped = await send(token, { email: atDomain(domain.toUpperCase()) }, undefined, path);
      expectError(capped, 429, 'OTP_RATE_LIMITED');
      expectRetryAfter(capped, 3600);
      expect(Number(capped.headers.get('Retry-After'))).toBeGreaterThan(3000);
      expect(capped.json.error.message).toContain('domain');
    }
    expect((await send(token, { email: atDomain(newDomain()) })).status).toBe(200);
    // The cap is the token's: the account's server key still sends to that domain.
    expect((await send(serverKey, { email: atDomain(domain) })).status).toBe(200);
    for (const email of walked) expect(await waitForInbox(email, 1)).toHaveLength(1);
  });

  it("resends are the recipients' limits' business: a session's resend is not refused or counted by the policy", async () => {
    const { token, tokenId } = await tokenWith({});
    const email = uniqueAddress('policy').replace('@', '+tag@');
    const { sessionId } = await sendAndRead(token, email);
    const policy = { blockSubaddresses: true, domainSendsPerHour: 1 };
    expect((await admin('PATCH', `/admin/v1/otp-tokens/${tokenId}`, { policy })).status).toBe(200);
    const resend = await call('POST', '/api/v1/instant-otp/resend', { token, body: { sessionId, email } });
    expect(resend.status).toBe(200);
    expectError(await send(token, { email }), 403, 'ADDRESS_NOT_ALLOWED');
    expect((await send(token, { email: uniqueAddress('policy') })).status).toBe(200);
  });

  it('PATCH changes one field of the policy at a time, and takes effect at once', async () => {
    const { token, tokenId } = await tokenWith({ blockDisposable: true, domainSendsPerHour: 1 });
    const email = atDomain('mailinator.com');
    expectError(await send(token, { email }), 403, 'ADDRESS_NOT_ALLOWED');
    const changed = await admin('PATCH', `/admin/v1/otp-tokens/${tokenId}`, { policy: { blockDisposable: false } });
    expect(changed.json.data).toMatchObject({
      policy: { blockDisposable: false, domainSendsPerHour: 1, blockSubaddresses: false },
    });
    expect((await send(token, { email })).status).toBe(200);
    expectError(await send(token, { email: atDomain('mailinator.com') }), 429, 'OTP_RATE_LIMITED');
    const uncapped = { policy: { domainSendsPerHour: null } };
    expect((await admin('PATCH', `/admin/v1/otp-tokens/${tokenId}`, uncapped)).status).toBe(200);
    expect((await send(token, { email: atDomain('mailinator.com') })).status).toBe(200);
  });
});
