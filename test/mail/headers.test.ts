// RFC 5322 line lengths and RFC 2047 encoded words: the header values mime.ts writes, and the
// raw message as it reaches a real SMTP server.
import { describe, expect, it } from 'vitest';
import { addressHeader, encodedWords, unstructuredHeader } from '../../src/mail/headers';
import { admin, call, newAccount, uniqueAddress, waitForInbox } from '../support/api';
import type { QueuedEmail, Sender } from '../support/responses';

const decode = (words: string[]) =>
  new TextDecoder().decode(
    Uint8Array.from(words.flatMap((w) => [...atob(w.slice('=?UTF-8?B?'.length, -2))].map((c) => c.charCodeAt(0)))),
  );

/** The header block of a raw message, unfolded into one string per header. */
function headerLines(raw: string): string[] {
  return raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');
}

function expectRfcLines(raw: string) {
  for (const line of raw.split('\r\n')) expect(Buffer.byteLength(line), line.slice(0, 80)).toBeLessThanOrEqual(998);
  // Every header line within 78 (the test addresses are short), and so the MIME part headers.
  for (const line of raw.split('\r\n').filter((l) => /^(\S+:|\s)/.test(l) && !l.startsWith('--'))) {
    expect(line.length, line).toBeLessThanOrEqual(78);
  }
  for (const line of headerLines(raw)) {
    for (const word of line.match(/=\?[^?]+\?[BQ]\?[^?]*\?=/g) ?? []) expect(word.length).toBeLessThanOrEqual(75);
  }
  // No encoded word inside a quoted string.
  expect(raw.slice(0, raw.indexOf('\r\n\r\n'))).not.toMatch(/"[^"\r\n]*=\?[^"\r\n]*"/);
}

describe('encodedWords', () => {
  it('splits UTF-8 text into words of at most 75 characters that decode back to the text', () => {
    const text = '🎉'.repeat(300);
    const words = encodedWords(text);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    expect(decode(words)).toBe(text);
  });

  it('keeps a grapheme cluster (family emoji, accents) inside one word', () => {
    const family = '👨‍👩‍👧‍👦';
    const words = encodedWords(`${'é'.repeat(20)}${family}${'ü'.repeat(20)}`);
    expect(words.some((w) => decode([w]).includes(family))).toBe(true);
  });
});

describe('unstructuredHeader (Subject)', () => {
  it('folds plain ASCII at spaces, each line at most 78 characters', () => {
    const subject = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
    const value = unstructuredHeader('Subject', subject);
    const lines = `Subject: ${value}`.split('\r\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(78);
    expect(value.replace(/\r\n /g, ' ')).toBe(subject);
  });

  it('a 998-character word with no space goes out as encoded words, never one long line', () => {
    const value = unstructuredHeader('Subject', 'x'.repeat(998));
    for (const line of `Subject: ${value}`.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
  });

  it('leading, trailing and double spaces survive (encoded)', () => {
    const value = unstructuredHeader('Subject', ' two  spaces ');
    expect(
      decode(
        value
          .split(/\r\n /)
          .flatMap((l) => l.split(' '))
          .filter(Boolean),
      ),
    ).toBe(' two  spaces ');
  });
});

describe('addressHeader', () => {
  it('a UTF-8 display name is encoded words outside quotes; an ASCII one is a quoted string', () => {
    expect(addressHeader('From', [{ email: 'a@example.com', name: 'Zoë Ärger' }])).toMatch(
      /^=\?UTF-8\?B\?[^"]+\?= <a@example\.com>$/,
    );
    expect(addressHeader('From', [{ email: 'a@example.com', name: 'Post Code' }])).toBe('"Post Code" <a@example.com>');
  });

  it('folds a list of 100 addresses between mailboxes', () => {
    const list = Array.from({ length: 100 }, (_, i) => ({ email: `recipient${i}@example.com` }));
    const lines = `To: ${addressHeader('To', list)}`.split('\r\n');
    expect(lines.length).toBeGreaterThan(30);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(78);
  });
});

describe('the raw message at a real SMTP server', () => {
  const send = async (mailKey: string, body: object) => {
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', { token: mailKey, body });
    expect(res.status).toBe(200);
  };

  it('a 998-character subject: every line within limits, the subject intact', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('long-subject');
    const subject = `${'a'.repeat(500)} ${'b'.repeat(497)}`;
    await send(mailKey, { to, subject, text: 'x' });
    const [mail] = await waitForInbox(to);
    expectRfcLines(mail!.raw);
    expect(mail!.subject).toBe(subject);
  });

  it('a 300-emoji subject: encoded words of at most 75 characters, decoded intact', async () => {
    const { mailKey } = await newAccount();
    const to = uniqueAddress('emoji-subject');
    const subject = '📬'.repeat(300);
    await send(mailKey, { to, subject, text: 'x' });
    const [mail] = await waitForInbox(to);
    expectRfcLines(mail!.raw);
    expect(mail!.subject).toBe(subject);
  });

  it('a UTF-8 sender name and 100 recipients: folded To, names never encoded inside quotes', async () => {
    const account = await newAccount();
    const sender = await admin<Sender>('POST', `/admin/v1/accounts/${account.accountId}/senders`, {
      email: uniqueAddress('sender'),
      name: 'Zoë Ärger — Büro für Grüße',
    });
    const to = Array.from({ length: 100 }, () => uniqueAddress('many'));
    const res = await call<QueuedEmail>('POST', '/api/v1/emails', {
      token: account.mailKey,
      body: { to, subject: 'Grüße aus Köln', text: 'x', senderEmailId: sender.json.data.id },
    });
    expect(res.status).toBe(200);
    const [mail] = await waitForInbox(to[0]!);
    expectRfcLines(mail!.raw);
    expect(mail!.to).toHaveLength(100);
    expect(mail!.subject).toBe('Grüße aus Köln');
    expect(mail!.from).toContain('Zoë Ärger — Büro für Grüße');
  });
});
