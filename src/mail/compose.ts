import { config, type Mailbox } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newEmailId, nowIso } from '../ids';
import { accountStore } from '../store/account/client';
import { type EmailTag, messageIdOf, type NewEmail, type Priority } from '../store/account/emails';
import { canonicalAddress } from './address';
import { type AttachmentRequest, type LoadedAttachment, loadAttachments } from './attachments';
import { sendingAddress } from './senders';
import { checkFilledSize, escapeHtml, fillTemplate, missingVars, type TemplateVars } from './template';

/** What a caller asked to send, after validation: the common shape of routes 1, 3, 4 and the batch. */
export type MailRequest = {
  to: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string[];
  scheduledAt?: string;
  tags?: EmailTag[];
  headers?: Record<string, string>;
  attachments?: AttachmentRequest[];
  subject?: string;
  html?: string;
  text?: string;
  imageUrl?: string;
  templateId?: string;
  vars?: TemplateVars;
  priority?: Priority;
  /** The sender by address (its display name, if given, is the one used), or by id; never both. */
  from?: Mailbox;
  senderEmailId?: string;
};

function imageBlock(url: string): string {
  return `<p><img src="${escapeHtml(url)}" alt="" style="max-width:100%"></p>`;
}

/** An email ready to be stored, and its attachments read (they go to R2 when it is stored). */
export type ComposedEmail = { email: NewEmail; attachments: LoadedAttachment[] };

/** Who sends: the account, and whether with a test key (its mail never reaches SMTP). */
export type Sender = { accountId: string; test: boolean };

/** A recipient named in to, cc and bcc goes out once, in the first of them. */
function distinctKinds(request: MailRequest) {
  const seen = new Set(request.to.map(canonicalAddress));
  const fresh = (list: string[] = []) =>
    list.filter((address) => {
      const key = canonicalAddress(address);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  const ccAddresses = fresh(request.cc);
  return { toAddresses: request.to, ccAddresses, bccAddresses: fresh(request.bcc) };
}

/**
 * Turns a request into the exact email that will be sent: template resolved, variables filled
 * (all or nothing), sender checked, attachments read. Throws the contract's errors; stores nothing.
 */
export async function composeEmail(env: Bindings, from: Sender, request: MailRequest): Promise<ComposedEmail> {
  const { accountId } = from;
  const template = request.templateId
    ? await accountStore(env, accountId).findTemplate(accountId, request.templateId)
    : null;
  if (request.templateId && !template) {
    throw new ApiError('TEMPLATE_NOT_FOUND', 'templateId: no such template for this account');
  }
  const { sender, senderId } = await sendingAddress(env, accountId, request);

  const subject = request.subject ?? template?.subject ?? '';
  const html = request.html ?? (template?.htmlBody || undefined);
  const text = request.text ?? (template?.textBody || undefined);
  const vars = request.vars ?? {};
  const missing = missingVars([subject, html, text], vars);
  if (missing.length > 0) {
    throw new ApiError('INVALID_INPUT', `vars: missing values for ${missing.join(', ')}`, {
      details: missing.map((name) => ({ path: `vars.${name}`, message: 'missing value' })),
    });
  }
  checkFilledSize(
    [
      { text: subject, mode: 'plain' },
      { text: html, mode: 'html' },
      { text, mode: 'plain' },
    ],
    vars,
    template ? `templateId: template ${template.id}` : 'vars: the email',
  );

  const filledSubject = fillTemplate(subject, vars, 'plain');
  if (/[\r\n\0]/.test(filledSubject)) throw new ApiError('INVALID_INPUT', 'subject: must not contain line breaks');
  if (filledSubject.length === 0 || filledSubject.length > 998) {
    throw new ApiError('INVALID_INPUT', 'subject: must be 1-998 characters');
  }
  let filledHtml = html ? fillTemplate(html, vars, 'html') : null;
  const filledText = text ? fillTemplate(text, vars, 'plain') : null;
  if (request.imageUrl) filledHtml = `${filledHtml ?? ''}${imageBlock(request.imageUrl)}`;
  if (!filledHtml && !filledText) throw new ApiError('INVALID_INPUT', 'html: the email has no content');

  const id = newEmailId(accountId);
  const attachments = await loadAttachments(id, request.attachments ?? [], config(env).webhooks.allowInsecure);
  const email: NewEmail = {
    id,
    accountId,
    templateId: template?.id ?? null,
    senderId,
    fromEmail: sender.email,
    fromName: sender.name,
    subject: filledSubject,
    html: filledHtml,
    text: filledText,
    priority: request.priority ?? 'NORMAL',
    messageId: messageIdOf(id, sender.email),
    ...distinctKinds(request),
    replyTo: request.replyTo ?? [],
    headers: request.headers ?? {},
    tags: request.tags ?? [],
    attachments: attachments.map((a) => a.meta),
    scheduledAt: request.scheduledAt ?? null,
    test: from.test,
    createdAt: nowIso(),
  };
  return { email, attachments };
}
