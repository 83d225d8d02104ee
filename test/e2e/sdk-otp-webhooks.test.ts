// The SDK as published (`postcode`, `postcode/browser`) against the service as `npm start` runs it: webhooks (every
// call, and `verifyWebhook` on the deliveries a loopback receiver really got), one-time codes of all three flavours
// with the codes from the local inbox, and the instant session a public token started, confirmed by the server key.
import { Postcode, verifyWebhook, WebhookVerificationError } from 'postcode';
import { createOtpClient } from 'postcode/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from './browser';
import { type Account, type Delivery, nthCode, ownAccount, type Receiver, service, startReceiver } from './sdk-support';

let account: Account;
let pc: Postcode;
let otp: Postcode;
let receiver: Receiver;

beforeAll(async () => {
  account = await ownAccount('sdk otp and webhooks');
  pc = new Postcode(account.mailKey, { baseUrl: service.baseUrl });
  otp = new Postcode(account.serverKey, { baseUrl: service.baseUrl });
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

/** A six-digit string that is none of the codes mailed (every code of a session stays valid). */
const noneOf = (...codes: string[]) => ['000000', '111111', '222222'].find((c) => !codes.includes(c))!;

describe('webhooks', () => {
  it('create, get, list, update, test, deliveries, retryDelivery, remove; verifyWebhook on real deliveries', async () => {
    const created = await pc.webhooks.create({ url: receiver.url, events: ['email.sent'], description: 'sdk e2e' });
    expect(created).toMatchObject({
      error: null,
      data: { id: expect.stringMatching(/^whk_/), url: receiver.url, events: ['email.sent'], enabled: true },
    });
    const id = created.data!.id;
    const firstSecret = created.data!.secret!;
    expect(firstSecret).toMatch(/^whsec_/);
    const got = await pc.webhooks.get(id);
    expect(got.data).toMatchObject({ id, url: receiver.url, description: 'sdk e2e' });
    expect(got.data, 'the secret is shown once').not.toHaveProperty('secret');
    expect((await pc.webhooks.list()).data?.webhooks.map((w) => w.id)).toContain(id);

    const updated = await pc.webhooks.update(id, { description: 'renamed', rotateSecret: true });
    expect(updated.data).toMatchObject({ id, description: 'renamed', secret: expect.stringMatching(/^whsec_/) });
    const secret = updated.data!.secret!;
    expect(secret).not.toBe(firstSecret);

    // webhook.test: the delivery the call answers is the one the receiver gets, signed with the new secret.
    const test = await pc.webhooks.test(id);
    expect(test).toMatchObject({
      error: null,
      data: { id: expect.stringMatching(/^msg_/), eventType: 'webhook.test' },
    });
    const testDelivery = await receiver.next((d) => d.type === 'webhook.test' && d.data.webhookId === id);
    expect(testDelivery.headers['webhook-id']).toBe(test.data!.id);
    const testEvent = await verifyWebhook(testDelivery.rawBody, testDelivery.headers, secret);
    expect(testEvent).toEqual(JSON.parse(testDelivery.rawBody));
    expect(testEvent).toMatchObject({ type: 'webhook.test', data: { webhookId: id } });

    // email.sent for an email of this account, verified from a Headers object and the body's bytes.
    const email = await pc.emails.send({ to: uniqueEmail('sdk-webhook'), subject: 'Hook', text: 'x' });
    const emailId = email.data!.id;
    const sent = await receiver.next((d) => d.type === 'email.sent' && d.data.emailId === emailId);
    const headers = new Headers(sent.headers as Record<string, string>);
    const sentEvent = await verifyWebhook(new TextEncoder().encode(sent.rawBody), headers, [secret, firstSecret]);
    expect(sentEvent).toMatchObject({ type: 'email.sent', data: { emailId, status: 'SENT' } });

    // What a receiver must refuse: another body, another secret, a delivery replayed ten minutes later.
    const refusals = [
      () => verifyWebhook(sent.rawBody.replace(emailId, 'em_forged'), sent.headers, secret),
      () => verifyWebhook(sent.rawBody, sent.headers, `whsec_${btoa('not the endpoint secret, 32 bytes')}`),
      () => verifyWebhook(sent.rawBody, sent.headers, secret, { now: new Date(Date.now() + 600_000) }),
    ];
    for (const refusal of refusals) await expect(refusal()).rejects.toBeInstanceOf(WebhookVerificationError);

    // The log, every page of it, once both deliveries were answered (the receiver answers 204 after recording).
    const log = async () => {
      const rows: { id: string; eventType: string; status: string; lastStatus?: number | null }[] = [];
      for await (const row of pc.webhooks.deliveries(id, { limit: 1 })) rows.push(row);
      return rows;
    };
    await expect
      .poll(async () => (await log()).map((d) => [d.id, d.eventType, d.status, d.lastStatus]).sort(), {
        timeout: 20_000,
      })
      .toEqual(
        [
          [test.data!.id, 'webhook.test', 'delivered', 204],
          [sent.headers['webhook-id'], 'email.sent', 'delivered', 204],
        ].sort(),
      );

    // A retry delivers the same message (same webhook-id) again, freshly signed.
    const before = receiver.deliveries.length;
    const retried = await pc.webhooks.retryDelivery(id, test.data!.id);
    expect(retried.data).toMatchObject({ id: test.data!.id, eventType: 'webhook.test' });
    const again: Delivery = await receiver.next((d) => d.headers['webhook-id'] === test.data!.id, before);
    expect(again.rawBody).toBe(testDelivery.rawBody);
    expect(await verifyWebhook(again.rawBody, again.headers, secret)).toEqual(testEvent);

    expect((await pc.webhooks.remove(id)).data).toEqual({ id, deleted: true });
    expect((await pc.webhooks.get(id)).error).toMatchObject({ code: 'WEBHOOK_NOT_FOUND', status: 404 });
  });
});

describe('one-time codes', () => {
  it('backend: send, resend, a wrong code, verify with the inbox’s code, verifications', async () => {
    const email = uniqueEmail('sdk-backend-otp');
    const sent = await otp.otp.backend.send({ email });
    expect(sent).toMatchObject({
      error: null,
      data: { sessionId: expect.stringMatching(/^otp_/), email, sent: true, expiresAt: expect.any(String) },
    });
    const { sessionId } = sent.data!;
    const first = await nthCode(email, 1);
    const resent = await otp.otp.backend.resend({ sessionId, email });
    expect(resent.data).toMatchObject({ sessionId, email, sent: true });
    const second = await nthCode(email, 2);

    const wrong = await otp.otp.backend.verify({ sessionId, email, code: noneOf(first, second) });
    expect(wrong.error).toMatchObject({ code: 'INVALID_CODE', status: 400, requestId: expect.stringMatching(/^req_/) });
    expect((await otp.otp.backend.verify({ sessionId, email, code: second })).data).toEqual({ verified: true });
    const used = await otp.otp.backend.verify({ sessionId, email, code: second });
    expect(used.error).toMatchObject({ code: 'SESSION_NOT_FOUND', status: 404 });

    const history = await otp.otp.backend.verifications({ limit: 100 });
    expect(history.data?.verifications).toContainEqual(
      expect.objectContaining({ email, sentAt: expect.any(String), verifiedAt: expect.any(String) }),
    );
  });

  it('email verification: send, get pending, resend, verify with the first code, get verified', async () => {
    const email = uniqueEmail('sdk-email-verification');
    const sent = await otp.otp.emailVerification.send({ email });
    expect(sent.error).toBeNull();
    const { sessionId, hostedVerifyUrl } = sent.data!;
    expect(new URL(hostedVerifyUrl).searchParams.get('sessionId')).toBe(sessionId);
    expect((await otp.otp.emailVerification.get(sessionId)).data).toMatchObject({
      sessionId,
      email,
      status: 'pending',
    });

    const first = await nthCode(email, 1);
    expect((await otp.otp.emailVerification.resend({ sessionId, email })).data).toMatchObject({ sent: true });
    await nthCode(email, 2);
    // The first mail's code still works after a resend.
    const verified = await otp.otp.emailVerification.verify({ sessionId, email, code: first });
    expect(verified.data).toEqual({ verified: true });
    expect((await otp.otp.emailVerification.get(sessionId)).data).toMatchObject({
      sessionId,
      email,
      status: 'verified',
      verifiedAt: expect.any(String),
    });
  });

  it('instant: a public token (postcode/browser) sends and verifies; the server key reads the session', async () => {
    const browser = createOtpClient({ token: account.publicToken, baseUrl: service.baseUrl });
    expect((await browser.config()).data).toMatchObject({ turnstile: null, codeLength: 6 });
    const email = uniqueEmail('sdk-instant');
    const sent = await browser.send({ email });
    expect(sent.data).toMatchObject({ email, sent: true });
    const { sessionId } = sent.data!;
    expect((await otp.otp.instant.session(sessionId)).data).toMatchObject({ sessionId, email, status: 'pending' });

    const verified = await browser.verify({ sessionId, email, code: await nthCode(email, 1) });
    expect(verified.data).toEqual({ verified: true });
    expect((await otp.otp.instant.session(sessionId)).data).toMatchObject({ sessionId, email, status: 'verified' });
    // Another account's key does not see the session.
    const stranger = await ownAccount('sdk otp stranger');
    const other = new Postcode(stranger.serverKey, { baseUrl: service.baseUrl });
    expect((await other.otp.instant.session(sessionId)).error).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      status: 404,
    });
  });
});
