import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import { otpStatus, verifyOtp } from '../otp/engine';
import { isFinal, renderVerifyPage, stateMessage, type PageState } from '../otp/verify-page';

const MAX_FORM_BYTES = 4096;

function securityHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

function page(c: Context<AppEnv>, sessionId: string, email: string, state: PageState, status = 200) {
  const nonce = crypto.randomUUID().replaceAll('-', '');
  return c.html(renderVerifyPage({ sessionId, email, state, nonce }), status as 200, securityHeaders(nonce));
}

/** Maps the engine's outcome (or its contract error) to what the page shows. */
async function attempt(c: Context<AppEnv>, sessionId: string, email: string, code: string): Promise<PageState> {
  try {
    await verifyOtp(c.env, { accountId: null, channel: 'email_verification' }, { sessionId, email, code });
    return { kind: 'verified' };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === 'INVALID_CODE') {
      return error.extra.attemptsLeft === undefined ? { kind: 'invalid' } : { kind: 'wrong', attemptsLeft: error.extra.attemptsLeft };
    }
    if (error.code === 'RATE_LIMITED') return { kind: 'locked' };
    return { kind: 'expired' };
  }
}

/** The hosted verify page (no key: the session id in the link and the code are the credential). */
export const verifyPageRoutes = new Hono<AppEnv>()
  .get('/verify', async (c) => {
    const sessionId = c.req.query('sessionId') ?? '';
    const status = await otpStatus(c.env, null, 'email_verification', sessionId);
    if (!status) return page(c, sessionId, '', { kind: 'expired' }, 404);
    const state: PageState = status.status === 'pending' ? { kind: 'form' } : { kind: status.status === 'verified' ? 'verified' : status.status };
    return page(c, sessionId, '', state);
  })
  .post('/verify', async (c) => {
    if (Number(c.req.header('Content-Length') ?? 0) > MAX_FORM_BYTES) {
      throw new ApiError('PAYLOAD_TOO_LARGE', 'body: larger than 4096 bytes');
    }
    const text = await c.req.text();
    if (text.length > MAX_FORM_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', 'body: larger than 4096 bytes');
    const form = new URLSearchParams(text);
    const sessionId = form.get('sessionId') ?? '';
    const email = (form.get('email') ?? '').trim();
    const state = await attempt(c, sessionId, email, (form.get('code') ?? '').trim());
    if ((c.req.header('Accept') ?? '').includes('application/json')) {
      const { tone, text } = stateMessage(state);
      return c.json({ state: state.kind, done: isFinal(state), tone, message: text }, 200, { 'Cache-Control': 'no-store' });
    }
    return page(c, sessionId, email, state);
  });
