// Mailing one code of a session: within the request (send, resend) or from the queue (retry). Every mail
// carries a fresh code; the code itself is never stored or logged, only its HMAC in the recipient's object.
import { waitUntil } from 'cloudflare:workers';
import { config, otpPepper, requireRoutes } from '../config';
import type { OtpRecipient } from '../durable-objects/otp-recipient';
import type { Bindings } from '../env';
import { newLinkToken } from '../ids';
import { senderIdentity } from '../mail/domains';
import type { OutgoingMail } from '../mail/outgoing';
import { type FirstRoute, type Probed, sendOnceThroughRoutes } from '../mail/routes/send';
import type { OtpRetryJob } from '../queue/jobs';
import { accountStore } from '../store/account/client';
import type { Template } from '../store/account/templates';
import { otpEvent } from '../webhooks/produce';
import { recordEvents } from '../webhooks/record';
import type { OtpBranding } from './branding';
import { brandingOf } from './branding';
import { generateCode, hashCode } from './codes';
import { renderOtpMail } from './mail';
import type { OtpChannel, OtpMailSettings } from './session';
import { hostedVerifyUrl } from './verify-page';

/** Who is asking: the account and the flavour's channel. */
export type CodeMailCaller = { accountId: string; channel: OtpChannel };

/** How a mail looks: the account's branding and, when the session names one, its template. */
export type MailLook = { branding: OtpBranding | null; template: Template | null };

export type CodeMail = {
  sessionId: string;
  email: string;
  code: string;
  expiresAt: number;
  mail: OtpMailSettings;
  look: MailLook;
  /** The one-click link (email verification). */
  link?: string;
};

/** The HMAC of a one-click link's token (never the token: like codes, it is not stored). */
export const linkHashOf = (env: Bindings, sessionId: string, token: string) =>
  hashCode(otpPepper(env), sessionId, `link:${token}`);

/** Email verification mails carry a one-click link to the hosted page; each mail its own token. */
export async function newLink(env: Bindings, channel: OtpChannel, sessionId: string) {
  if (channel !== 'email_verification') return undefined;
  const linkToken = newLinkToken();
  const url = hostedVerifyUrl(config(env).publicBaseUrl, sessionId, linkToken);
  return { url, hash: await linkHashOf(env, sessionId, linkToken) };
}

/**
 * The look of a later mail of a session (resend, retry): branding as it is now, and the session's template
 * if it still exists (a deleted one: the built-in mail, so the user still gets a code).
 */
export async function mailLookOf(env: Bindings, accountId: string, mail: Pick<OtpMailSettings, 'templateId'>) {
  const [branding, template] = await Promise.all([
    brandingOf(env, accountId),
    mail.templateId ? accountStore(env, accountId).findTemplate(accountId, mail.templateId) : null,
  ]);
  return { branding, template };
}

/** The return path key of an OTP mail: `otp_` and the session id's random part (the id is too long). */
const returnPathKeyOf = (sessionId: string) => `otp_${sessionId.slice(sessionId.lastIndexOf('_') + 1)}`;

async function outgoingMail(env: Bindings, accountId: string, message: CodeMail): Promise<OutgoingMail> {
  const { mail } = message;
  const rendered = renderOtpMail({
    code: message.code,
    verificationLine: mail.verificationLine,
    expiresInSeconds: Math.max(Math.round((message.expiresAt - Date.now()) / 1000), 1),
    link: message.link,
    language: mail.language,
    ...message.look,
  });
  return {
    ...(await senderIdentity(env, accountId, mail.from.email, returnPathKeyOf(message.sessionId))),
    from: mail.from,
    to: [message.email],
    subject: rendered.subject ?? mail.subject,
    text: rendered.text,
    html: rendered.html,
    // Each code mail of a session is its own message (another code): its own Message-ID.
    messageId: `<${message.sessionId}.${Date.now().toString(36)}@${mail.from.email.split('@').pop()}>`,
    headers: { 'Content-Language': mail.language ?? 'en' },
  };
}

/** `otp.sent` once the server took a code mail. */
const recordSent = (env: Bindings, caller: CodeMailCaller, message: Pick<CodeMail, 'sessionId' | 'email'>) =>
  recordEvents(env, caller.accountId, [
    otpEvent('otp.sent', { sessionId: message.sessionId, email: message.email, channel: caller.channel }),
  ]);

/**
 * Mails one code of a session within the request, at most `OTP_SEND_WAIT_MS`. Accepted: `otp.sent` is
 * recorded after the answer. Not now (4xx, network, timeout): the queue retry mails a fresh code for the same
 * session (the code itself is not kept anywhere). Returns whether the server took it.
 */
export async function mailCode(env: Bindings, caller: CodeMailCaller, message: CodeMail, connecting: FirstRoute) {
  const outgoing = await outgoingMail(env, caller.accountId, message);
  const routes = requireRoutes(env);
  const outcome = await sendOnceThroughRoutes(env, routes, outgoing, {
    first: connecting,
    waitMs: config(env).otp.sendWaitMs,
  });
  if (outcome.kind === 'accepted') {
    // After the answer: the event is not worth the caller's wait (a crash in between loses only it).
    waitUntil(recordSent(env, caller, message).catch((error) => console.error('otp.sent not recorded', error)));
  }
  if (outcome.kind === 'transient') {
    const { mail } = message;
    const job: OtpRetryJob = {
      kind: 'otp-retry',
      sessionId: message.sessionId,
      accountId: caller.accountId,
      channel: caller.channel,
      email: message.email,
      subject: mail.subject,
      verificationLine: mail.verificationLine,
      digits: message.code.length,
      expiresAt: message.expiresAt,
      from: mail.from,
      language: mail.language,
      templateId: mail.templateId,
    };
    await env.MAIL_QUEUE.send(job, { contentType: 'json' });
  }
  return outcome.kind === 'accepted';
}

/**
 * Mails a fresh code for a pending session (queue retry of an OTP mail that could not go out). The code is
 * added to the session first: the first one stays valid. As a retry it is never held by an open breaker
 * while the code is still worth sending: with nothing else to try, it probes the route (`probed`: the
 * batch's, one probe per route).
 */
export async function retryCodeMail(
  env: Bindings,
  job: OtpRetryJob,
  sessionObject: DurableObjectStub<OtpRecipient> | null,
  probed: Probed = new Set(),
) {
  const remainingSeconds = Math.floor((job.expiresAt - Date.now()) / 1000);
  const code = generateCode(job.digits);
  const link = job.channel ? await newLink(env, job.channel, job.sessionId) : undefined;
  const codeHash = await hashCode(otpPepper(env), job.sessionId, code);
  const added =
    remainingSeconds > 0 &&
    sessionObject !== null &&
    (await sessionObject.addCode(job.sessionId, job.accountId, codeHash, link?.hash));
  if (!added) return { kind: 'accepted' as const }; // verified, expired or gone: nothing to send
  const { subject, verificationLine, from, language, templateId } = job;
  const message: CodeMail = {
    sessionId: job.sessionId,
    email: job.email,
    code,
    expiresAt: job.expiresAt,
    mail: { subject, verificationLine, from, language, templateId },
    look: await mailLookOf(env, job.accountId, job),
    link: link?.url,
  };
  const outgoing = await outgoingMail(env, job.accountId, message);
  const outcome = await sendOnceThroughRoutes(env, requireRoutes(env), outgoing, { probed });
  if (outcome.kind === 'accepted') await recordSent(env, job, job);
  return outcome;
}
