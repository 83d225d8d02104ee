// OTP mail in the caller's language: BCP 47 matched by language, Intl for the lifetime, Content-Language set.
import { describe, expect, it } from 'vitest';
import { LANGUAGES, languageOf, mailText } from '../../src/otp/languages';
import { call, expectError, newAccount, uniqueAddress, waitForInbox } from '../support/api';
import { sendAndRead } from '../support/otp';

const headerOf = (raw: string, name: string) =>
  raw
    .slice(0, raw.indexOf('\r\n\r\n'))
    .split('\r\n')
    .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));

describe('languageOf and mailText', () => {
  it('matches a tag by its language, else English', () => {
    expect(languageOf('de')).toBe('de');
    expect(languageOf('pt-BR')).toBe('pt');
    expect(languageOf('zh-Hant-TW')).toBe('zh');
    expect(languageOf('FR-ca')).toBe('fr');
    expect(languageOf('sv')).toBe('en');
    expect(languageOf(undefined)).toBe('en');
    expect(languageOf('not a tag')).toBe('en');
  });

  it('writes the lifetime with Intl, plurals included, in every language', () => {
    expect(mailText('en', 1).expiry).toContain('1 minute.');
    expect(mailText('en', 10).expiry).toContain('10 minutes.');
    expect(mailText('de', 1).expiry).toContain('1 Minute');
    expect(mailText('de', 10).expiry).toContain('10 Minuten');
    expect(mailText('zh', 10).expiry).toContain('10分钟');
    for (const language of LANGUAGES) {
      const text = mailText(language, 10);
      expect(text.expiry, language).toMatch(/10/);
      expect(text.expiry, language).not.toContain('{duration}');
      expect(text.subject.length, language).toBeGreaterThan(0);
    }
  });
});

describe('locale on the OTP send routes', () => {
  it('mails in the language of the tag, with Content-Language, and a resend keeps it', async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('deutsch');
    const { sessionId } = await sendAndRead('/api/v1/backend-otp/send', serverKey, email, { locale: 'de-AT' });
    const [mail] = await waitForInbox(email);
    expect(mail!.subject).toBe('Ihr Bestätigungscode');
    expect(mail!.text).toContain('Verwenden Sie diesen Code');
    expect(mail!.text).toContain('10 Minuten');
    expect(headerOf(mail!.raw, 'Content-Language')).toBe('Content-Language: de');
    const resent = await call('POST', '/api/v1/backend-otp/resend', { token: serverKey, body: { sessionId, email } });
    expect(resent.status).toBe(200);
    const mails = await waitForInbox(email, 2);
    expect(mails[1]!.subject).toBe('Ihr Bestätigungscode');
    expect(headerOf(mails[1]!.raw, 'Content-Language')).toBe('Content-Language: de');
  });

  it('a language we do not have gets English; no locale too', async () => {
    const { serverKey, publicToken } = await newAccount();
    const swedish = uniqueAddress('svenska');
    await sendAndRead('/api/v1/backend-otp/send', serverKey, swedish, { locale: 'sv-SE' });
    const [mail] = await waitForInbox(swedish);
    expect(mail!.subject).toBe('Your verification code');
    expect(headerOf(mail!.raw, 'Content-Language')).toBe('Content-Language: en');
    const instant = uniqueAddress('instant');
    await sendAndRead('/api/v1/instant-otp/send', publicToken, instant, { locale: 'ja' });
    expect((await waitForInbox(instant))[0]!.subject).toBe('確認コード');
  });

  it('a malformed tag is refused, naming locale', async () => {
    const { serverKey } = await newAccount();
    for (const locale of ['not a tag', 'de\r\nX: y', 'x'.repeat(36), 12]) {
      const res = await call('POST', '/api/v1/email-verification/send', {
        token: serverKey,
        body: { email: uniqueAddress('bad'), locale },
      });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.json.error.message).toMatch(/^locale: /);
    }
  });
});
