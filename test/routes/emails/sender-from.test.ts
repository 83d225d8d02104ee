// `from` on the send routes: a verified sender of the account named by address, as every peer takes it.
import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  expectError,
  newAccount,
  sendLogTotal,
  type TestAccount,
  uniqueAddress,
  waitForInbox,
} from '../../support/api';
import type { QueuedEmail } from '../../support/responses';
import { createTemplate } from '../../support/templates';

type Send = (account: TestAccount, to: string, sender: Record<string, unknown>) => Promise<ApiResponse>;

const queue = (token: string, body: unknown) => call<QueuedEmail>('POST', '/api/v1/emails', { token, body });

/** Each route that takes `from`, sending one text mail to `to` with the given sender fields. */
const ROUTES: Record<string, Send> = {
  'POST /api/v1/emails': (a, to, sender) => queue(a.mailKey, { to, subject: 'From', text: 'x', ...sender }),
  'POST /api/v1/emails/batch': (a, to, sender) =>
    call('POST', '/api/v1/emails/batch', {
      token: a.mailKey,
      body: { emails: [{ to, subject: 'From', text: 'x', ...sender }] },
    }),
  'POST /api/v1/templates/send': async (a, to, sender) => {
    const template = await createTemplate(a.mailKey, { subject: 'From', textBody: 'x' });
    return call('POST', '/api/v1/templates/send', {
      token: a.mailKey,
      body: { to, templateId: template.id, ...sender },
    });
  },
  'POST /api/v1/templates/send-test': (a, to, sender) =>
    call('POST', '/api/v1/templates/send-test', { token: a.mailKey, body: { to, ...sender } }),
};

for (const [name, send] of Object.entries(ROUTES)) {
  describe(`${name} with from`, () => {
    it('"Name <address>" of a verified sender: sent from that address with the given display name', async () => {
      const account = await newAccount();
      const to = uniqueAddress('from');
      const res = await send(account, to, { from: `Acme Billing <${account.senderEmail.toUpperCase()}>` });
      expect(res.status).toBe(200);
      const [mail] = await waitForInbox(to);
      expect(mail!.envelopeFrom).toBe(account.senderEmail);
      expect(mail!.from).toContain('Acme Billing');
      expect(mail!.from).toContain(account.senderEmail);
    });

    it("a bare address keeps the sender's stored name", async () => {
      const account = await newAccount();
      const to = uniqueAddress('from');
      expect((await send(account, to, { from: account.senderEmail })).status).toBe(200);
      const [mail] = await waitForInbox(to);
      expect(mail!.envelopeFrom).toBe(account.senderEmail);
      expect(mail!.from).toContain('Sender Name');
    });

    it('403 SENDER_NOT_VERIFIED for an address that is not a sender of this account; nothing is queued', async () => {
      const mine = await newAccount();
      const other = await newAccount();
      for (const from of [other.senderEmail, `Me <${uniqueAddress('nobody')}>`]) {
        const res = await send(mine, uniqueAddress('from'), { from });
        expectError(res, 403, 'SENDER_NOT_VERIFIED');
        expect(res.json.error.message).toMatch(/(^|\.)from: /);
      }
      expect(await sendLogTotal(mine.mailKey)).toBe(0);
    });

    it('400 INVALID_INPUT for from with senderEmailId, or a from that is not a mailbox', async () => {
      const account = await newAccount();
      const both = await send(account, uniqueAddress('from'), {
        from: account.senderEmail,
        senderEmailId: account.senderId,
      });
      expectError(both, 400, 'INVALID_INPUT');
      expect(both.json.error.message).toMatch(/from: .*not both/);
      for (const from of ['not an address', 'A "quoted" <x@y.example>', `Line\nbreak <${account.senderEmail}>`, 42]) {
        expectError(await send(account, uniqueAddress('from'), { from }), 400, 'INVALID_INPUT');
      }
      expect(await sendLogTotal(account.mailKey)).toBe(0);
    });
  });
}
