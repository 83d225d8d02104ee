import { escapeHtml } from '../mail/template';

export const DEFAULT_OTP_SUBJECT = 'Your verification code';
export const DEFAULT_VERIFICATION_LINE = 'Use this code to continue:';

const LINK_LINE = 'Or verify with one click:';

/**
 * The OTP email: the instruction line, the code and its lifetime, in a text and an HTML part; with `link`
 * (email verification) also the one-click link to the hosted page.
 */
export function renderOtpMail(options: {
  code: string;
  verificationLine?: string;
  expiresInSeconds: number;
  link?: string;
}) {
  const line = options.verificationLine ?? DEFAULT_VERIFICATION_LINE;
  const minutes = Math.ceil(options.expiresInSeconds / 60);
  const expiry = `This code expires in ${minutes} minute${minutes === 1 ? '' : 's'}. If you did not ask for it, you can ignore this email.`;
  const link = options.link;
  return {
    text: `${line}\n\n${options.code}\n\n${link ? `${LINK_LINE}\n${link}\n\n` : ''}${expiry}\n`,
    html:
      `<p>${escapeHtml(line)}</p>` +
      `<p style="font-size:28px;font-weight:bold;letter-spacing:4px;font-family:monospace">${options.code}</p>` +
      (link ? `<p>${escapeHtml(LINK_LINE)} <a href="${escapeHtml(link)}">Verify my email address</a></p>` : '') +
      `<p>${escapeHtml(expiry)}</p>`,
  };
}
