// The one-click link of email verification mails: GET shows one button (never verifies), the button's POST
// verifies; the token is single-use, expires with the session and is stored only as an HMAC.
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { call, newAccount, uniqueAddress, waitForInbox } from '../../support/api';
import { expireSession, sendAndRead, sessionStub } from '../../support/otp';
import type { OtpSent } from '../../support/responses';

type Sent = OtpSent & { hostedVerifyUrl: string };
const SEND = '/api/v1/email-verification/send';

/** The one-click link of the `index`-th mail to `email` (path and query, as the worker sees it). */
async function linkFrom(email: string, index = 0): Promise<{ path: string; token: string }> {
  const mails = await waitForInbox(email, index + 1);
  const line = mails[index]!.text.split(/\r?\n/).find((l) => l.includes('/verify?sessionId='));
  expect(line, mails[index]!.text).toBeDefined();
  const url = new URL(line!.trim());
  expect(url.origin).toBe('http://postcode.test');
  return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
}

const status = async (serverKey: string, sessionId: string) =>
  (await call<{ status: string }>('GET', `/api/v1/email-verification/${sessionId}`, { token: serverKey })).json.data
    .status;

const press = (sessionId: string, token: string, json = false) =>
  call('POST', '/verify', {
    rawBody: new URLSearchParams({ sessionId, token }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(json ? { Accept: 'application/json' } : {}) },
  });

describe('the one-click link of email verification', () => {
  it('GET shows a button and verifies nothing (prefetching scanners); one press verifies', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('magic');
    const { sessionId } = await sendAndRead<Sent>(SEND, serverKey, email);
    const { path, token } = await linkFrom(email);
    expect(token).toMatch(/^[a-z2-7]{32}$/);
    for (let i = 0; i < 3; i++) {
      const page = await call('GET', path);
      expect(page.status).toBe(200);
      expect(page.text).toContain('name="token"');
      expect(page.text).toContain('Verify my email address');
      expect(page.text).toContain(email);
      expect(await status(serverKey, sessionId)).toBe('pending');
    }
    const pressed = await press(sessionId, token, true);
    expect(pressed.json).toMatchObject({ state: 'verified', done: true });
    expect(await status(serverKey, sessionId)).toBe('verified');
    // Single use: the link now shows the finished state and verifies nothing more.
    expect((await call('GET', path)).text).not.toContain('name="token"');
    expect((await press(sessionId, token, true)).json).toMatchObject({ state: 'expired', done: true });
  });

  it('the HTML form POST (no JavaScript) verifies too', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('magicform');
    const { sessionId } = await sendAndRead<Sent>(SEND, serverKey, email);
    const { token } = await linkFrom(email);
    const page = await press(sessionId, token);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Your email address is verified');
    expect(await status(serverKey, sessionId)).toBe('verified');
  });

  it('a tampered token counts as a wrong attempt and verifies nothing', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('tamper');
    const { sessionId } = await sendAndRead<Sent>(SEND, serverKey, email);
    const { token } = await linkFrom(email);
    const flipped = (token[0] === 'a' ? 'b' : 'a') + token.slice(1);
    expect((await press(sessionId, flipped, true)).json).toMatchObject({ state: 'wrong', done: false });
    expect(await status(serverKey, sessionId)).toBe('pending');
    expect((await press(sessionId, token, true)).json).toMatchObject({ state: 'verified' });
  });

  it('expires with the session', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('expire');
    const { sessionId } = await sendAndRead<Sent>(SEND, serverKey, email);
    const { path, token } = await linkFrom(email);
    await expireSession(sessionId);
    expect((await call('GET', path)).text).not.toContain('name="token"');
    expect((await press(sessionId, token, true)).json).toMatchObject({ state: 'expired' });
  });

  it('a resend mails a new link; the first one still works; only HMACs of tokens are stored', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('relink');
    const { sessionId } = await sendAndRead<Sent>(SEND, serverKey, email);
    const first = await linkFrom(email);
    const resent = await call('POST', '/api/v1/email-verification/resend', {
      token: serverKey,
      body: { sessionId, email },
    });
    expect(resent.status).toBe(200);
    const second = await linkFrom(email, 1);
    expect(second.token).not.toBe(first.token);
    const stored = await runInDurableObject(sessionStub(sessionId), (_instance, state) =>
      state.storage.sql
        .exec<{ link_hashes: string }>('SELECT link_hashes FROM otp_sessions WHERE id = ?', sessionId)
        .one()
        .link_hashes.split(','),
    );
    expect(stored).toHaveLength(2);
    for (const hash of stored) {
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect([first.token, second.token]).not.toContain(hash);
    }
    expect((await press(sessionId, first.token, true)).json).toMatchObject({ state: 'verified' });
  });

  it('backend OTP mails carry no link', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('nolink');
    await sendAndRead('/api/v1/backend-otp/send', serverKey, email);
    const [mail] = await waitForInbox(email);
    expect(mail!.text).not.toContain('/verify?');
  });
});
