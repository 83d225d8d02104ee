// A public token that requires Turnstile (issue: "A bot check on public sends"): sends and resends of instant OTP and
// its legacy alias need an answer Siteverify accepts (the local stub honours Cloudflare's test secrets), else 403
// CHALLENGE_FAILED and nothing is mailed; verify needs none, a server key never does; GET …/config tells the
// browser the site key.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { admin, call, expectError, inbox, newAccount, uniqueAddress, waitForInbox } from '../../support/api';
import {
  TURNSTILE_TEST_SECRETS as SECRETS,
  TURNSTILE_TEST_SITE_KEY as SITE_KEY,
  type SiteverifyCall,
} from '../../support/node/turnstile-stub';
import { INSTANT, LEGACY, send, sendAndRead, verify } from '../../support/public-otp';
import type { OtpSent, OtpToken } from '../../support/responses';

const RESEND = { instant: '/api/v1/instant-otp/resend', legacy: '/api/v1/otp/resend' } as const;
const answer = (label = 'answer') => `${label}-${crypto.randomUUID()}`;

/** A new account and a public token of it that requires Turnstile with `secret`. */
async function challengedToken(secret: string = SECRETS.passes) {
  const account = await newAccount();
  const res = await admin<OtpToken>('POST', `/admin/v1/accounts/${account.accountId}/otp-tokens`, {
    turnstile: { siteKey: SITE_KEY, secret },
  });
  expect(res.status).toBe(201);
  return { ...account, token: res.json.data.token, tokenId: res.json.data.id };
}

/** Nothing was mailed to `email` (a refused send never reaches SMTP). */
async function expectNothingMailed(email: string) {
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await inbox(email)).toHaveLength(0);
}

async function siteverifyCalls(response: string): Promise<SiteverifyCall[]> {
  const calls = (await (await fetch(`${env.TURNSTILE_STUB_URL}/calls`)).json()) as SiteverifyCall[];
  return calls.filter((c) => c.response === response);
}

describe('a public token that requires Turnstile', () => {
  for (const path of [INSTANT.send, LEGACY.send]) {
    it(`${path}: no answer, a failed or a spent one → 403 CHALLENGE_FAILED, nothing mailed`, async () => {
      for (const [secret, turnstileToken] of [
        [SECRETS.passes, undefined],
        [SECRETS.fails, answer()],
        [SECRETS.spent, answer()],
      ] as const) {
        const { token } = await challengedToken(secret);
        const email = uniqueAddress('challenge-refused');
        const res = await send(token, { email, ...(turnstileToken ? { turnstileToken } : {}) }, {}, path);
        expectError(res, 403, 'CHALLENGE_FAILED');
        await expectNothingMailed(email);
      }
    });

    it(`${path}: an answer Siteverify accepts → the code is mailed; the client address goes with it`, async () => {
      const { token } = await challengedToken();
      const email = uniqueAddress('challenge-passed');
      const turnstileToken = answer();
      const res = await send(token, { email, turnstileToken }, { 'CF-Connecting-IP': '203.0.113.7' }, path);
      expect(res.status).toBe(200);
      await waitForInbox(email);
      expect(await siteverifyCalls(turnstileToken)).toMatchObject([
        { secret: SECRETS.passes, response: turnstileToken, remoteip: '203.0.113.7' },
      ]);
    });
  }

  it('Siteverify unreachable: asked twice with one idempotency key, then 403; a second chance that answers passes', async () => {
    const { token } = await challengedToken();
    const email = uniqueAddress('challenge-down');
    const down = answer('siteverify-down');
    expectError(await send(token, { email, turnstileToken: down }), 403, 'CHALLENGE_FAILED');
    const calls = await siteverifyCalls(down);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.idempotency_key).toBe(calls[1]!.idempotency_key);
    await expectNothingMailed(email);
    const flaky = answer('siteverify-flaky');
    expect((await send(token, { email, turnstileToken: flaky })).status).toBe(200);
    await waitForInbox(email);
  });

  for (const [flavour, path] of Object.entries(RESEND)) {
    it(`${flavour} resend needs the check too; verify needs none`, async () => {
      const { token } = await challengedToken();
      const email = uniqueAddress(`challenge-${flavour}`);
      const sendPath = flavour === 'instant' ? INSTANT.send : LEGACY.send;
      const { sessionId, code } = await sendAndRead(token, email, { turnstileToken: answer() }, sendPath);
      expectError(await call('POST', path, { token, body: { sessionId, email } }), 403, 'CHALLENGE_FAILED');
      const resent = await call('POST', path, { token, body: { sessionId, email, turnstileToken: answer() } });
      expect(resent.status).toBe(200);
      await waitForInbox(email, 2);
      const verifyPath = flavour === 'instant' ? INSTANT.verify : LEGACY.verify;
      expect((await verify(token, { sessionId, email, code }, verifyPath)).json).toEqual({
        success: true,
        data: { verified: true },
      });
    });
  }

  it('never asks a server key of the same account; a token without the check ignores an answer it is sent', async () => {
    const { serverKey, publicToken } = await challengedToken();
    expect((await send(serverKey, { email: uniqueAddress('challenge-server') })).status).toBe(200);
    const res = await send(publicToken, { email: uniqueAddress('challenge-none'), turnstileToken: answer() });
    expect(res.status).toBe(200);
  });

  it('taking the check off (PATCH turnstile: null) lets sends through without an answer at once', async () => {
    const { token, tokenId } = await challengedToken();
    expectError(await send(token, { email: uniqueAddress('challenge-on') }), 403, 'CHALLENGE_FAILED');
    expect((await admin('PATCH', `/admin/v1/otp-tokens/${tokenId}`, { turnstile: null })).status).toBe(200);
    expect((await send<OtpSent>(token, { email: uniqueAddress('challenge-off') })).status).toBe(200);
  });

  it('a turnstileToken longer than Siteverify takes, or empty → 400 INVALID_INPUT', async () => {
    const { token } = await challengedToken();
    for (const turnstileToken of ['', 'x'.repeat(2049)]) {
      expectError(await send(token, { email: uniqueAddress('challenge-bad'), turnstileToken }), 400, 'INVALID_INPUT');
    }
  });
});

describe('GET /api/v1/instant-otp/config', () => {
  it("gives the browser the token's site key (or null), the languages and the code's length; never the secret", async () => {
    const { token, publicToken } = await challengedToken();
    const res = await call('GET', '/api/v1/instant-otp/config', { token });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: {
        turnstile: { siteKey: SITE_KEY },
        languages: ['en', 'de', 'fr', 'es', 'pt', 'it', 'nl', 'ja', 'zh'],
        codeLength: 6,
      },
    });
    expect(JSON.stringify(res.json)).not.toContain(SECRETS.passes);
    const plain = await call('GET', '/api/v1/instant-otp/config', { token: publicToken });
    expect((plain.json as { data: { turnstile: unknown } }).data.turnstile).toBeNull();
  });
});
