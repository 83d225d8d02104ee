// The hosted page when something fails on our side: a page for the browser, the envelope for its script.
import { describe, expect, it } from 'vitest';
import { fetchWith } from '../../support/api';
import { unknownSessionId } from '../../support/otp';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
// Without OTP_PEPPER no code can be checked: the verify throws an unexpected error (not an outcome).
const BROKEN = { OTP_PEPPER: '' };

describe('POST /verify: unexpected errors', () => {
  it('a browser gets a 500 page saying it failed on our side, not "expired"', async () => {
    const rawBody = `sessionId=${unknownSessionId()}&email=ada%40example.com&code=123456`;
    const res = await fetchWith(BROKEN, 'POST', '/verify', { rawBody, headers: FORM });
    expect(res.status).toBe(500);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
    expect(res.headers.get('Content-Security-Policy')).toContain("default-src 'none'");
    const page = String(res.json);
    expect(page).toContain('Something went wrong on our side');
    expect(page).not.toContain('expired');
  });

  it('the page script (Accept: application/json) gets the 500 envelope', async () => {
    const rawBody = `sessionId=${unknownSessionId()}&email=ada%40example.com&code=123456`;
    const res = await fetchWith(BROKEN, 'POST', '/verify', {
      rawBody,
      headers: { ...FORM, Accept: 'application/json' },
    });
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
  });

  it('expected outcomes are still pages of their own state (unknown session → expired, 200)', async () => {
    const rawBody = `sessionId=${unknownSessionId()}&email=ada%40example.com&code=123456`;
    const res = await fetchWith({}, 'POST', '/verify', { rawBody, headers: FORM });
    expect(res.status).toBe(200);
    expect(String(res.json)).toContain('expired');
  });
});
