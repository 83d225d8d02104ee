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

describe('the hosted page in the session’s or the browser’s language', () => {
  const page = (sessionId: string, acceptLanguage?: string) =>
    call('GET', `/verify?sessionId=${sessionId}`, {
      headers: acceptLanguage ? { 'Accept-Language': acceptLanguage } : {},
    });

  it('Accept-Language picks the first language we have; html lang and Content-Language follow', async () => {
    const { serverKey } = await newAccount();
    const { sessionId } = await sendAndRead('/api/v1/email-verification/send', serverKey, uniqueAddress('page'));
    const german = await page(sessionId, 'sv-SE, de-CH;q=0.9, en;q=0.8');
    expect(german.text).toContain('<html lang="de">');
    expect(german.text).toContain('<label for="code">Bestätigungscode</label>');
    expect(german.headers.get('Content-Language')).toBe('de');
    expect((await page(sessionId, 'fr;q=0.2, zh;q=0.7')).text).toContain('<html lang="zh">');
    expect((await page(sessionId, 'sv')).text).toContain('<html lang="en">');
    expect((await page(sessionId)).text).toContain('Enter the code we emailed you.');
  });

  it("the send's locale wins over the browser's, and the page's answers stay in it (plurals by Intl)", async () => {
    const { serverKey } = await newAccount();
    const email = uniqueAddress('pagefr');
    const { sessionId, code } = await sendAndRead('/api/v1/email-verification/send', serverKey, email, {
      locale: 'fr',
    });
    const shown = await page(sessionId, 'de');
    expect(shown.text).toContain('<html lang="fr">');
    expect(shown.text).toContain('name="lang" value="fr"');
    const wrong = code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);
    const answer = (tries: string) =>
      call('POST', '/verify', {
        rawBody: new URLSearchParams({ sessionId, email, code: tries, lang: 'fr' }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      });
    expect((await answer(wrong)).json).toMatchObject({ message: "Ce code n'est pas correct. Il reste 4 tentatives." });
    for (let i = 0; i < 3; i++) await answer(wrong);
    expect((await answer(wrong)).json).toMatchObject({ state: 'wrong', done: true });
  });

  it('every language words the attempts left with its own plural forms', async () => {
    const { wrongCodeText } = await import('../../src/otp/page-text');
    expect(wrongCodeText('en', 1)).toBe('That code is not right. 1 attempt left.');
    expect(wrongCodeText('de', 1)).toContain('Noch 1 Versuch.');
    expect(wrongCodeText('fr', 1)).toContain('Il reste 1 tentative.');
    expect(wrongCodeText('ja', 3)).toContain('残り3回');
    for (const language of LANGUAGES) expect(wrongCodeText(language, 2), language).toContain('2');
  });
});
