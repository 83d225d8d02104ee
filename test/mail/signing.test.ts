// Mail from a verified domain, as it reaches a real SMTP server: DKIM-signed (checked by mailauth, which
// postcode did not write) and sent with the domain's return path; mail on other domains is never signed.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../src/base64';
import { messageKeyOf } from '../../src/mail/return-path';
import {
  call,
  codeFromInbox,
  expectError,
  fetchWith,
  newAccount,
  type ReceivedMail,
  type TestAccount,
  uniqueAddress,
  waitForInbox,
} from '../support/api';
import { runBatch, storedEmail } from '../support/delivery';
import { addDomain, type Domain, publish, recordOf, verifiedDomain } from '../support/domains';
import type { QueuedEmail } from '../support/responses';

type Verdict = { result: string; domain: string | null; selector: string | null; comment: string | null };

/** mailauth's verdicts on a raw message, the DKIM records answered as the domain publishes them. */
async function dkimResults(raw: string, domains: Domain[]): Promise<Verdict[]> {
  const records = Object.fromEntries(
    domains.flatMap((d) => d.records.filter((r) => r.purpose === 'dkim').map((r) => [r.name, r.value])),
  );
  const res = await fetch(`${env.DKIM_VERIFIER_URL}/verify`, {
    method: 'POST',
    body: JSON.stringify({ message: raw, records }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: Verdict[] }).results;
}

async function expectPass(mail: ReceivedMail, domain: Domain) {
  expect(await dkimResults(mail.raw, [domain])).toMatchObject([{ result: 'pass', domain: domain.name }]);
}

const send = (account: TestAccount, body: object) =>
  call<QueuedEmail>('POST', '/api/v1/emails', { token: account.mailKey, body });

/** An account with a verified domain, and a sender address on it. */
async function signingAccount() {
  const account = await newAccount();
  const domain = await verifiedDomain(account.mailKey);
  return { account, domain, from: `Shop <orders@${domain.name}>` };
}

describe('DKIM signatures on mail from a verified domain', () => {
  it('plain text: pass; the envelope is the return path naming the email, with a MAC', async () => {
    const { account, domain, from } = await signingAccount();
    const to = uniqueAddress('dkim');
    const res = await send(account, { from, to, subject: 'Plain', text: 'Hello.\n\n.A dot line\n' });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    await expectPass(mail!, domain);
    expect(mail!.raw.replace(/\r\n\s+/g, ' ')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=/);
    const selector = recordOf(domain, 'dkim').name.split('.')[0];
    expect(mail!.raw).toContain(`s=${selector};`);
    expect(mail!.envelopeFrom).toMatch(new RegExp(`^bounces\\+${res.json.data.id}-[a-z2-7]{16}@pc-bounces\\.`));
    expect(mail!.envelopeFrom.endsWith(`@pc-bounces.${domain.name}`)).toBe(true);
    expect(await messageKeyOf('test-dkim-key-secret', mail!.envelopeFrom)).toBe(res.json.data.id);
    // A changed MAC, or another key with this MAC, is not ours.
    const changed = mail!.envelopeFrom.replace(/-([a-z2-7])/, (_, c: string) => `-${c === 'a' ? 'b' : 'a'}`);
    expect(changed).not.toBe(mail!.envelopeFrom);
    expect(await messageKeyOf('test-dkim-key-secret', changed)).toBeNull();
    expect(await messageKeyOf('another-secret', mail!.envelopeFrom)).toBeNull();
  });

  it('html and text, a 998-character UTF-8 subject folded, custom headers: pass', async () => {
    const { account, domain, from } = await signingAccount();
    const to = uniqueAddress('dkim');
    const subject = `Grüße aus Köln ✓ ${'eine lange Betreffzeile '.repeat(60)}`.slice(0, 998);
    const res = await send(account, {
      from,
      to,
      replyTo: 'help@example.com',
      subject,
      html: '<p>Thanks for your order.</p>',
      text: 'Thanks for your order.',
      headers: {
        'List-Unsubscribe': '<https://example.com/u/1>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'X-Entity-Ref-ID': 'order-42',
      },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to);
    await expectPass(mail!, domain);
    expect(mail!.subject).toBe(subject);
    const signed = /h=([^;]+);/.exec(mail!.raw.replace(/\r\n\s+/g, ' '))![1]!.replace(/\s/g, '');
    expect(signed).toBe(
      'from:from:to:subject:date:message-id:reply-to:mime-version:content-type:list-unsubscribe:list-unsubscribe-post',
    );
  });

  it('100 recipients in one transaction: pass', async () => {
    const { account, domain, from } = await signingAccount();
    const to = Array.from({ length: 50 }, () => uniqueAddress('many'));
    const cc = Array.from({ length: 50 }, () => uniqueAddress('many'));
    const res = await send(account, { from, to, cc, subject: 'Many', text: 'To all of you.' });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(cc[49]!);
    expect(mail!.envelopeTo).toHaveLength(100);
    await expectPass(mail!, domain);
  });

  it('a 5 MB attachment streamed from R2 and an inline cid image: pass', async () => {
    const { account, domain, from } = await signingAccount();
    const to = uniqueAddress('dkim');
    const png = new Uint8Array(600).map((_, i) => (i * 7) % 256);
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: account.mailKey,
      body: {
        from,
        to,
        subject: 'Files',
        html: '<p><img src="cid:logo@shop"></p>',
        text: 'See the attachment.',
        attachments: [
          { filename: 'report.bin', path: `${env.FILE_SERVER_URL}/files/5000000` },
          { filename: 'logo.png', content: toBase64(png), contentId: 'logo@shop' },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const [mail] = await waitForInbox(to, 1);
    expect(mail!.raw.length).toBeGreaterThan(6_500_000);
    await expectPass(mail!, domain);
  }, 60_000);

  it('through STARTTLS: pass', async () => {
    const { account, domain } = await signingAccount();
    const to = uniqueAddress('tls');
    const id = await storedEmail(account.accountId, to, {
      fromEmail: `orders@${domain.name}`,
      messageId: `<tls@${domain.name}>`,
    });
    await runBatch([id], 1, 'postcode-mail', {
      ...env,
      SMTP_PORT: env.STARTTLS_SMTP_PORT,
      SMTP_SECURE: 'starttls',
    });
    const [mail] = await waitForInbox(to, 1, env.STARTTLS_INBOX_URL);
    await expectPass(mail!, domain);
  });

  it('one changed body byte or signed header: fail', async () => {
    const { account, domain, from } = await signingAccount();
    const to = uniqueAddress('dkim');
    await send(account, { from, to, subject: 'Tamper', text: 'Pay 100 EUR.' });
    const [mail] = await waitForInbox(to);
    const body = mail!.raw.replace('Pay 100 EUR.', 'Pay 900 EUR.');
    expect(body).not.toBe(mail!.raw);
    expect(await dkimResults(body, [domain])).toMatchObject([{ result: 'fail' }]);
    const header = mail!.raw.replace('Subject: Tamper', 'Subject: Tampered');
    expect(header).not.toBe(mail!.raw);
    expect(await dkimResults(header, [domain])).toMatchObject([{ result: 'fail' }]);
  });

  it('an OTP code mail from the domain: pass, with a return path of its own', async () => {
    const { account, domain } = await signingAccount();
    const to = uniqueAddress('otp');
    const res = await call('POST', '/api/v1/instant-otp/send', {
      token: account.serverKey,
      body: { email: to, from: `codes@${domain.name}` },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    await codeFromInbox(to);
    const [mail] = await waitForInbox(to);
    await expectPass(mail!, domain);
    expect(mail!.envelopeFrom).toMatch(/^bounces\+otp_[a-z2-7]{26}-[a-z2-7]{16}@pc-bounces\./);
  });

  it('rotation: mail before it verifies with the old selector, mail after with the new, both during the overlap', async () => {
    const { account, domain, from } = await signingAccount();
    const before = uniqueAddress('rotate');
    await send(account, { from, to: before, subject: 'Before', text: 'x' });
    const [old] = await waitForInbox(before);
    const rotated = await call<Domain>('POST', `/api/v1/domains/${domain.id}/rotate-dkim`, { token: account.mailKey });
    const next = rotated.json.data.records.filter((r) => r.purpose === 'dkim')[1]!;
    // Until the new record is found, mail is still signed with the old selector.
    const pending = uniqueAddress('rotate');
    await send(account, { from, to: pending, subject: 'Pending', text: 'x' });
    const [stillOld] = await waitForInbox(pending);
    await publish([next]);
    const verified = await call<Domain>('POST', `/api/v1/domains/${domain.id}/verify`, { token: account.mailKey });
    const after = uniqueAddress('rotate');
    await send(account, { from, to: after, subject: 'After', text: 'x' });
    const [fresh] = await waitForInbox(after);
    const selectorOf = (mail: ReceivedMail) => /\bs=([a-z0-9]+);/.exec(mail.raw.replace(/\r\n\s+/g, ' '))![1];
    const [oldSelector, newSelector] = verified.json.data.records
      .filter((r) => r.purpose === 'dkim')
      .map((r) => r.name.split('.')[0]);
    expect([selectorOf(old!), selectorOf(stillOld!), selectorOf(fresh!)]).toEqual([
      oldSelector,
      oldSelector,
      newSelector,
    ]);
    // Both records are listed (and published) during the overlap: every one of these mails verifies.
    for (const mail of [old!, stillOld!, fresh!]) {
      expect(await dkimResults(mail.raw, [verified.json.data])).toMatchObject([{ result: 'pass' }]);
    }
  });

  it('partially verified: signed, the envelope is the global return path (or the sender without one)', async () => {
    const account = await newAccount();
    const domain = await addDomain(account.mailKey);
    await publish([recordOf(domain, 'dkim')]);
    const verified = await call<Domain>('POST', `/api/v1/domains/${domain.id}/verify`, { token: account.mailKey });
    expect(verified.json.data.status).toBe('partially_verified');
    const to = uniqueAddress('partial');
    const from = `orders@${domain.name}`;
    await send(account, { from, to, subject: 'Partial', text: 'x' });
    const [mail] = await waitForInbox(to);
    await expectPass(mail!, domain);
    expect(mail!.envelopeFrom).toBe(from);
    const id = await storedEmail(account.accountId, to, { fromEmail: from, messageId: `<p@${domain.name}>` });
    await runBatch([id], 1, 'postcode-mail', { ...env, RETURN_PATH_DOMAIN: 'bounces.postcode.test' });
    const [, second] = await waitForInbox(to, 2);
    expect(second!.envelopeFrom).toMatch(new RegExp(`^bounces\\+${id}-[a-z2-7]{16}@bounces\\.postcode\\.test$`));
    await expectPass(second!, domain);
  });
});

describe('mail that is not signed', () => {
  it('the service default sender and a verified sender off any domain: no signature', async () => {
    const { account } = await signingAccount();
    const to = uniqueAddress('plain');
    await send(account, { to, subject: 'Default', text: 'x' });
    await send(account, { from: account.senderEmail, to, subject: 'Sender', text: 'x' });
    const mails = await waitForInbox(to, 2);
    for (const mail of mails) expect(mail.raw).not.toMatch(/^DKIM-Signature/m);
  });

  it("a domain not verified, or verified by another account, cannot send (403); another account's key never signs", async () => {
    const owner = await signingAccount();
    const other = await newAccount();
    const pending = await addDomain(other.mailKey);
    const to = uniqueAddress('refused');
    const onPending = await send(other, { from: `a@${pending.name}`, to, subject: 'x', text: 'x' });
    expectError(onPending, 403, 'SENDER_NOT_VERIFIED');
    expect(onPending.json.error.message).toBe(`from: the domain ${pending.name} is not verified (status pending)`);
    const onOwners = await send(other, { from: `a@${owner.domain.name}`, to, subject: 'x', text: 'x' });
    expectError(onOwners, 403, 'SENDER_NOT_VERIFIED');
    expect(onOwners.json.error.message).toBe(
      `from: a@${owner.domain.name} is not a sender of this account, and ${owner.domain.name} is not a verified domain of it`,
    );
    // Stored directly (as if accepted before): delivered unsigned, never with the owner's key.
    const id = await storedEmail(other.accountId, to, { fromEmail: `a@${owner.domain.name}` });
    await runBatch([id]);
    const [mail] = await waitForInbox(to);
    expect(mail!.raw).not.toMatch(/^DKIM-Signature/m);
  });

  it('without DKIM_KEY_SECRET the domain routes fail loudly and mail goes out unsigned', async () => {
    const { account, from } = await signingAccount();
    const to = uniqueAddress('nosecret');
    const res = await fetchWith({ DKIM_KEY_SECRET: '' }, 'POST', '/api/v1/domains', {
      token: account.mailKey,
      body: { name: 'nosecret.example' },
    });
    expectError(res, 500, 'INTERNAL_ERROR');
    const refused = await fetchWith({ DKIM_KEY_SECRET: '' }, 'POST', '/api/v1/emails', {
      token: account.mailKey,
      body: { from, to, subject: 'x', text: 'x' },
    });
    expectError(refused, 403, 'SENDER_NOT_VERIFIED');
  });
});
