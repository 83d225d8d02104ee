import { ApiError } from '../errors';
import { checkFilledSize, escapeHtml, fillTemplate, missingVars, type TemplateVars } from '../mail/template';
import type { Template } from '../store/account/templates';
import type { OtpBranding } from './branding';
import { accentColors, productNameOf } from './branding';
import { helpLine, type Language, mailText } from './languages';

/** What one code mail says: the code, its lifetime, the one-click link (email verification) and the look. */
export type OtpMailContent = {
  code: string;
  expiresInSeconds: number;
  /** A caller's own line above the code, used as written. */
  verificationLine?: string;
  link?: string;
  language?: Language;
  branding: OtpBranding | null;
  /** An account's saved template: its subject and bodies with the OTP placeholders filled. */
  template?: Template | null;
};

/** The placeholders an OTP template may use; `magicLink` only where the mail has a link. */
const OTP_VARS = ['code', 'expiresInMinutes', 'productName', 'magicLink'] as const;

function templateVars(content: OtpMailContent): TemplateVars {
  const vars: TemplateVars = {
    code: content.code,
    expiresInMinutes: Math.ceil(content.expiresInSeconds / 60),
    productName: productNameOf(content.branding),
  };
  if (content.link) vars.magicLink = content.link;
  return vars;
}

/**
 * Refuses a template an OTP mail cannot be made from: one without `{{code}}` in a body, or one using a
 * placeholder OTP mail does not fill (`magicLink` is only filled in email verification mail).
 */
export function checkOtpTemplate(template: Template, withLink: boolean) {
  const names = withLink ? OTP_VARS : OTP_VARS.filter((name) => name !== 'magicLink');
  const supplied = Object.fromEntries(names.map((name) => [name, '']));
  const unknown = missingVars([template.subject, template.htmlBody, template.textBody], supplied);
  if (unknown.length > 0) {
    throw new ApiError(
      'INVALID_INPUT',
      `templateId: OTP mail fills only ${names.map((name) => `{{${name}}}`).join(', ')}; the template also uses ${unknown.map((name) => `{{${name}}}`).join(', ')}`,
    );
  }
  if (missingVars([template.htmlBody, template.textBody], {}).every((name) => name !== 'code')) {
    throw new ApiError('INVALID_INPUT', 'templateId: the template has no {{code}} in its body');
  }
}

/** The OTP email: the subject when a template sets it, and the text and HTML parts. */
export function renderOtpMail(content: OtpMailContent): { subject?: string; text: string | null; html: string } {
  if (content.template) return renderFromTemplate(content, content.template);
  const language = content.language ?? 'en';
  const words = mailText(language, Math.ceil(content.expiresInSeconds / 60));
  const line = content.verificationLine ?? words.line;
  const { link, branding } = content;
  const colors = branding?.accentColor ? accentColors(branding.accentColor) : null;
  const help = branding?.supportEmail ? helpLine(language, branding.supportEmail) : null;
  const header =
    (branding?.logoUrl
      ? `<p><img src="${escapeHtml(branding.logoUrl)}" alt="${escapeHtml(branding.productName ?? '')}" height="40"></p>`
      : '') +
    (branding?.productName ? `<p style="font-size:18px;font-weight:bold">${escapeHtml(branding.productName)}</p>` : '');
  const codeStyle = `font-size:28px;font-weight:bold;letter-spacing:4px;font-family:monospace${colors ? `;color:${colors.accent}` : ''}`;
  const buttonStyle = colors
    ? ` style="display:inline-block;padding:10px 18px;border-radius:6px;background:${colors.accent};color:${colors.onAccent};text-decoration:none"`
    : '';
  return {
    text:
      (branding?.productName ? `${branding.productName}\n\n` : '') +
      `${line}\n\n${content.code}\n\n${link ? `${words.link}\n${link}\n\n` : ''}${words.expiry}\n` +
      (help ? `\n${help}\n` : ''),
    html:
      header +
      `<p>${escapeHtml(line)}</p>` +
      `<p style="${codeStyle}">${content.code}</p>` +
      (link
        ? `<p>${escapeHtml(words.link)} <a href="${escapeHtml(link)}"${buttonStyle}>${escapeHtml(words.button)}</a></p>`
        : '') +
      `<p>${escapeHtml(words.expiry)}</p>` +
      (help && branding?.supportEmail
        ? `<p>${escapeHtml(help).replace(escapeHtml(branding.supportEmail), `<a href="mailto:${escapeHtml(branding.supportEmail)}">${escapeHtml(branding.supportEmail)}</a>`)}</p>`
        : ''),
  };
}

/** Refuses (400) a template the mail would fill past what a message may carry, before filling it. */
export function checkOtpMailSize(content: OtpMailContent) {
  const { template } = content;
  if (!template) return;
  const texts = [
    { text: template.subject, mode: 'plain' as const },
    { text: template.htmlBody, mode: 'html' as const },
    { text: template.textBody, mode: 'plain' as const },
  ];
  checkFilledSize(texts, templateVars(content), `templateId: template ${template.id}`);
}

function renderFromTemplate(content: OtpMailContent, template: Template) {
  checkOtpMailSize(content);
  const vars = templateVars(content);
  const text = template.textBody ? fillTemplate(template.textBody, vars, 'plain') : null;
  // A template with only a text body still goes out with an HTML part that says the same.
  const html = template.htmlBody
    ? fillTemplate(template.htmlBody, vars, 'html')
    : `<pre style="font-family:inherit;white-space:pre-wrap">${escapeHtml(text ?? '')}</pre>`;
  return { subject: fillTemplate(template.subject, vars, 'plain'), text, html };
}

/** The default subject of OTP mail in `language`. */
export const defaultOtpSubject = (language: Language = 'en') => mailText(language, 1).subject;
