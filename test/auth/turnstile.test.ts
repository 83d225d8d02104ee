// The Siteverify client (src/auth/turnstile.ts) against the local stub that honours Cloudflare's test secrets:
// accepted, refused with Siteverify's reason, and asked once more with the same idempotency key when no answer came.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { turnstileRefusal } from '../../src/auth/turnstile';
import { TURNSTILE_TEST_SECRETS as SECRETS, type SiteverifyCall } from '../support/node/turnstile-stub';

const url = `${env.TURNSTILE_STUB_URL}/siteverify`;

/** The stub's calls for one answer token. */
async function callsFor(response: string): Promise<SiteverifyCall[]> {
  const calls = (await (await fetch(`${env.TURNSTILE_STUB_URL}/calls`)).json()) as SiteverifyCall[];
  return calls.filter((c) => c.response === response);
}

const unique = (label: string) => `${label}-${crypto.randomUUID()}`;

describe('Siteverify', () => {
  it('accepts what the passing test secret passes, and sends the secret, the answer and the client address', async () => {
    const response = unique('answer');
    expect(await turnstileRefusal(url, { secret: SECRETS.passes, response, remoteip: '203.0.113.9' })).toBeNull();
    const [call] = await callsFor(response);
    expect(call).toMatchObject({ secret: SECRETS.passes, response, remoteip: '203.0.113.9' });
    expect(call!.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses with Siteverify's reason: a failed check, a spent answer, an unknown secret", async () => {
    const check = (secret: string) =>
      turnstileRefusal(url, { secret, response: unique('answer'), remoteip: undefined });
    expect(await check(SECRETS.fails)).toBe('invalid-input-response');
    expect(await check(SECRETS.spent)).toBe('timeout-or-duplicate');
    expect(await check('0x4AAAAAAAnot-a-real-secret')).toBe('invalid-input-secret');
  });

  it('asks once more with the same idempotency key when no answer came, and takes that answer', async () => {
    // The stub answers 500 to the first call of each key for this answer token.
    const response = unique('siteverify-flaky');
    expect(await turnstileRefusal(url, { secret: SECRETS.passes, response, remoteip: undefined })).toBeNull();
    const calls = await callsFor(response);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.idempotency_key).toBe(calls[1]!.idempotency_key);
  });

  it('refuses when Siteverify does not answer twice (an HTTP 500, a page that is not its JSON)', async () => {
    const down = { secret: SECRETS.passes, response: unique('siteverify-down'), remoteip: undefined };
    expect(await turnstileRefusal(url, down)).toBe('Siteverify did not answer');
    expect(await callsFor(down.response)).toHaveLength(2);
    const garbage = { ...down, response: unique('siteverify-garbage') };
    expect(await turnstileRefusal(url, garbage)).toBe('Siteverify did not answer');
    expect(await callsFor(garbage.response)).toHaveLength(2);
  });
});
