import { escapeHtml } from '../mail/template';
import { type Language, mailText } from './languages';

/**
 * The OTP email in `language`: the instruction line, the code and its lifetime, in a text and an HTML part;
 * with `link` (email verification) also the one-click link to the hosted page. A caller's own
 * `verificationLine` is used as written.
 */
export function renderOtpMail(options: {
  code: string;
  verificationLine?: string;
  expiresInSeconds: number;
  link?: string;
  language?: Language;
}) {
  const words = mailText(options.language ?? 'en', Math.ceil(options.expiresInSeconds / 60));
  const line = options.verificationLine ?? words.line;
  const link = options.link;
  return {
    text: `${line}\n\n${options.code}\n\n${link ? `${words.link}\n${link}\n\n` : ''}${words.expiry}\n`,
    html:
      `<p>${escapeHtml(line)}</p>` +
      `<p style="font-size:28px;font-weight:bold;letter-spacing:4px;font-family:monospace">${options.code}</p>` +
      (link ? `<p>${escapeHtml(words.link)} <a href="${escapeHtml(link)}">${escapeHtml(words.button)}</a></p>` : '') +
      `<p>${escapeHtml(words.expiry)}</p>`,
  };
}

/** The default subject of OTP mail in `language`. */
export const defaultOtpSubject = (language: Language = 'en') => mailText(language, 1).subject;
