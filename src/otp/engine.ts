// The one OTP engine behind every flavour (instant, legacy alias, backend, email verification).
// Routes map auth, request and response shapes; generation, storage, sending and checking live here.
import { waitUntil } from 'cloudflare:workers';
import { config, defaultSender, type Mailbox, otpPepper, requireRoutes } from '../config';
import type { SendLimits } from '../durable-objects/recipient-sends';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { newSessionId, nowIso, sessionObjectIdOf } from '../ids';
import { canonicalAddress } from '../mail/address';
import { dropFirstRoute, type Probed, startFirstRoute } from '../mail/routes/send';
import { sendingAddress } from '../mail/senders';
import { bucketRule, type RateLimitCode, rateLimitError } from '../middleware/rate-limit';
import type { OtpRetryJob, VerificationHistoryJob } from '../queue/jobs';
import { accountStore } from '../store/account/client';
import { brandingOf } from './branding';
import { linkHashOf, type MailLook, mailCode, mailLookOf, newLink, retryCodeMail } from './code-mail';
import { generateCode, hashCode } from './codes';
import { writeSessionFact } from './facts';
import { historyWritten, writeAfterResponse } from './history-writes';
import { languageOf } from './languages';
import { checkOtpMailSize, checkOtpTemplate, defaultOtpSubject } from './mail';
import { countRefusal } from './refusals';
import type { OtpChannel, VerificationEntry, VerifyOutcome } from './session';

export type OtpSendRequest = {
  email: string;
  expiresInSeconds: number;
  otpDigits: number;
  subject?: string;
  verificationLine?: string;
  from?: string;
  /** BCP 47: the language of the mail (one of ours by its language, else English). */
  locale?: string;
  /** An account's saved template with `{{code}}` (and `{{expiresInMinutes}}`, `{{productName}}`, `{{magicLink}}`). */
  templateId?: string;
  /** A session id made beforehand with `newRecipientSessionId` (an answer given before the mail goes). */
  sessionId?: string;
};

export type OtpSendResult = { sessionId: string; expiresAt: string; email: string; sent: boolean };

/** Who is asking: the account, the flavour's channel, and the 429 code its routes use. */
export type OtpCaller = { accountId: string; channel: OtpChannel; rateLimitCode: RateLimitCode };

/** The object holding every session and the OTP limits of one recipient of one account. */
const recipientObjectId = (env: Bindings, accountId: string, email: string) =>
  env.OTP_RECIPIENT.idFromName(`${accountId}:${canonicalAddress(email)}`);

/** A new session id of a recipient of an account, for a send that will name it. */
export const newRecipientSessionId = (env: Bindings, accountId: string, email: string) =>
  newSessionId(recipientObjectId(env, accountId, email).toString());

/** The object of a session, from the session id alone; null when the id is not one of ours. */
function sessionObject(env: Bindings, sessionId: string) {
  const objectId = sessionObjectIdOf(sessionId);
  if (!objectId) return null;
  try {
    return env.OTP_RECIPIENT.get(env.OTP_RECIPIENT.idFromString(objectId));
  } catch {
    return null; // well-formed hex, but not an id of this namespace
  }
}

async function resolveFrom(env: Bindings, accountId: string, from: string | undefined): Promise<Mailbox> {
  const request = from === undefined ? {} : { from: { email: from, name: null } };
  return (await sendingAddress(env, accountId, request)).sender;
}

/** The look of a session's first mail: a named template must exist in the account and suit OTP mail. */
async function sendLook(env: Bindings, caller: OtpCaller, templateId: string | undefined): Promise<MailLook> {
  const [branding, template] = await Promise.all([
    brandingOf(env, caller.accountId),
    templateId ? accountStore(env, caller.accountId).findTemplate(caller.accountId, templateId) : null,
  ]);
  if (templateId && !template)
    throw new ApiError('TEMPLATE_NOT_FOUND', 'templateId: no such template for this account');
  if (template) checkOtpTemplate(template, caller.channel === 'email_verification');
  return { branding, template };
}

/** A recipient's send limits: in 10 minutes, in a day, and the doubling wait (RATE_OTP_SEND_PER_RECIPIENT, …). */
const recipientSendLimits = (env: Bindings): SendLimits => ({
  window: bucketRule(env, 'otp-send-recipient'),
  day: bucketRule(env, 'otp-send-recipient-day'),
  backoffSeconds: config(env).limits.otpBackoffSeconds,
});

/** Creates a session and mails its code within the request (OTP mail is URGENT: freeze never holds it). */
export async function sendOtp(env: Bindings, caller: OtpCaller, request: OtpSendRequest): Promise<OtpSendResult> {
  const routes = requireRoutes(env);
  const [from, look] = await Promise.all([
    resolveFrom(env, caller.accountId, request.from),
    sendLook(env, caller, request.templateId),
  ]);
  const objectId = recipientObjectId(env, caller.accountId, request.email);
  const sessionId = request.sessionId ?? newSessionId(objectId.toString());
  const code = generateCode(request.otpDigits);
  const expiresAt = Date.now() + request.expiresInSeconds * 1000;
  const codeHash = await hashCode(otpPepper(env), sessionId, code);
  const link = await newLink(env, caller.channel, sessionId);
  checkOtpMailSize({ code, expiresInSeconds: request.expiresInSeconds, link: link?.url, ...look });
  // The SMTP handshake runs while the recipient's object counts the send and stores the session; a
  // refused send closes it unused (the per-credential limit, checked before, bounds such connections).
  const connecting = startFirstRoute(routes);
  // Kept only when the send named one: without it, the hosted page follows the browser's Accept-Language.
  const language = request.locale ? languageOf(request.locale) : undefined;
  const mail = {
    subject: request.subject ?? defaultOtpSubject(language),
    verificationLine: request.verificationLine,
    from,
    language,
    ...(request.templateId ? { templateId: request.templateId } : {}),
  };
  const perRecipient = await env.OTP_RECIPIENT.get(objectId)
    .start(
      {
        sessionId,
        accountId: caller.accountId,
        channel: caller.channel,
        email: request.email,
        codeHash,
        digits: request.otpDigits,
        expiresAt,
        maxAttempts: config(env).otp.maxAttempts,
        mail,
        linkHash: link?.hash,
      },
      recipientSendLimits(env),
    )
    .catch((error: unknown) => {
      dropFirstRoute(connecting);
      throw error;
    });
  if (!perRecipient.allowed) {
    dropFirstRoute(connecting);
    countRefusal(env, caller.accountId, caller.channel, 'recipient_capped');
    throw rateLimitError(
      caller.rateLimitCode,
      perRecipient,
      'Too many codes sent to this address: retry after Retry-After',
    );
  }

  const message = { sessionId, email: request.email, code, expiresAt, mail, look, link: link?.url };
  const sent = await mailCode(env, caller, message, connecting);
  return { sessionId, expiresAt: nowIso(new Date(expiresAt)), email: request.email, sent };
}

export type OtpResendRequest = { sessionId: string; email: string };

/**
 * Mails a fresh code for an existing session (the user pressed "resend"): every code mailed for it stays
 * valid until it expires, its attempts and lock are shared, and the recipient's send limit counts it.
 * Unknown, another account's or flavour's, used, expired or locked sessions: 404.
 */
export async function resendOtpCode(
  env: Bindings,
  caller: OtpCaller,
  request: OtpResendRequest,
): Promise<OtpSendResult> {
  const routes = requireRoutes(env);
  const notFound = () =>
    new ApiError('SESSION_NOT_FOUND', 'sessionId: no such session, or it has expired, been used or locked');
  const object = sessionObject(env, request.sessionId);
  const session = await object?.resendable(request.sessionId, caller.accountId, caller.channel, request.email);
  if (!object || !session) throw notFound();
  const code = generateCode(session.digits);
  const link = await newLink(env, caller.channel, request.sessionId);
  const connecting = startFirstRoute(routes);
  const hashes = { code: await hashCode(otpPepper(env), request.sessionId, code), link: link?.hash };
  const decision = await object
    .resend(request.sessionId, caller.accountId, hashes, recipientSendLimits(env))
    .catch((error: unknown) => {
      dropFirstRoute(connecting);
      throw error;
    });
  if (!decision?.allowed) dropFirstRoute(connecting);
  if (!decision) throw notFound();
  if (!decision.allowed) {
    countRefusal(env, caller.accountId, caller.channel, 'recipient_capped');
    throw rateLimitError(
      caller.rateLimitCode,
      decision,
      'Too many codes sent to this address: retry after Retry-After',
    );
  }
  const mail = session.mail ?? { subject: defaultOtpSubject(), from: defaultSender(env) };
  const message = {
    sessionId: request.sessionId,
    email: request.email,
    code,
    expiresAt: session.expiresAt,
    mail,
    look: await mailLookOf(env, caller.accountId, mail),
    link: link?.url,
  };
  const sent = await mailCode(env, caller, message, connecting);
  return { sessionId: request.sessionId, expiresAt: nowIso(new Date(session.expiresAt)), email: request.email, sent };
}

/**
 * Mails a fresh code for a pending session (queue retry of an OTP mail that could not go out); `probed`: the
 * routes the batch's retries already probed past an open breaker.
 */
export const resendOtp = (env: Bindings, job: OtpRetryJob, probed?: Probed) =>
  retryCodeMail(env, job, sessionObject(env, job.sessionId), probed);

/** A code and the address it was sent to, or (the hosted page's button) the token of a one-click link. */
export type OtpVerifyRequest =
  | { sessionId: string; email: string; code: string }
  | { sessionId: string; token: string };

/** What proves the session: a code's HMAC (its length and address checked) or a link token's HMAC. */
async function proofOf(env: Bindings, request: OtpVerifyRequest) {
  if ('token' in request) {
    const linkHash = await linkHashOf(env, request.sessionId, request.token.slice(0, 64));
    return { email: '', codeLength: 0, codeHash: '', linkHash };
  }
  if (!/^[0-9]{4,10}$/.test(request.code)) return null;
  const codeHash = await hashCode(otpPepper(env), request.sessionId, request.code);
  return { email: request.email, codeLength: request.code.length, codeHash };
}

/**
 * Checks a code or a link token (a wrong one counts like a wrong code). `accountId` null = the hosted verify
 * page (no credential). Returns the outcome: the JSON routes turn a failure into the contract's error with
 * `verifyError`, the hosted page shows it. A verified outcome has its history row written (or queued) after
 * the response; the history routes wait for it.
 */
export async function verifyOtp(
  env: Bindings,
  caller: { accountId: string | null; channel: OtpChannel },
  request: OtpVerifyRequest,
): Promise<VerifyOutcome> {
  const object = sessionObject(env, request.sessionId);
  if (!object) return { result: 'not_found' };
  const proof = await proofOf(env, request);
  if (!proof) return { result: 'malformed' };
  const outcome = await object.verify(
    { sessionId: request.sessionId, accountId: caller.accountId, channel: caller.channel, ...proof },
    bucketRule(env, 'otp-fails-recipient'),
  );
  // The object kept each fact in its outbox; once D1 has it, the outbox lets go (else its alarm writes it).
  if (outcome.result === 'wrong' && outcome.attemptsLeft === 0) {
    const session = { sessionId: request.sessionId, email: outcome.email, channel: caller.channel };
    await writeSessionFact(env, { kind: 'locked', accountId: outcome.accountId, session });
    waitUntil(object.settle(request.sessionId, 'locked'));
  }
  if (outcome.result === 'verified') {
    const entry = {
      accountId: outcome.accountId,
      channel: caller.channel,
      sessionId: request.sessionId,
      email: outcome.email,
      sentAt: nowIso(new Date(outcome.sentAt)),
      verifiedAt: nowIso(new Date(outcome.verifiedAt)),
    };
    // The session is consumed and the fact is in the object's outbox: the caller need not wait for D1.
    writeAfterResponse(outcome.accountId, async () => {
      if (await keepVerification(env, entry)) await object.settle(request.sessionId, 'verified');
    });
  }
  return outcome;
}

/** The contract's error for every outcome but `verified` (the JSON verify routes). */
export function verifyError(env: Bindings, outcome: Exclude<VerifyOutcome, { result: 'verified' }>): ApiError {
  switch (outcome.result) {
    case 'limited':
      return rateLimitError('RATE_LIMITED', outcome.decision, 'Too many failed codes for this address');
    case 'wrong':
      return new ApiError(
        'INVALID_CODE',
        outcome.attemptsLeft > 0
          ? `code: wrong code; ${outcome.attemptsLeft} attempt${outcome.attemptsLeft === 1 ? '' : 's'} left`
          : 'code: wrong code; no attempts left, the session is locked',
      );
    case 'malformed':
      return new ApiError('INVALID_CODE', 'code: expected the digits of the code');
    case 'locked':
      return rateLimitError(
        'RATE_LIMITED',
        { allowed: false, limit: config(env).otp.maxAttempts, remaining: 0, resetSeconds: outcome.retryAfterSeconds },
        'Too many wrong codes: this session is locked; request a new code',
      );
    case 'expired':
    case 'not_found':
      return new ApiError('SESSION_NOT_FOUND', 'sessionId: no such session, or it has expired or been used');
  }
}

/**
 * Writes the history row of a verification (with its event). The session is already consumed, so a
 * failed write must not turn the success into an error the caller cannot retry: the row goes through
 * the queue instead. Returns whether D1 or the queue has it (if neither, the object's outbox does).
 */
async function keepVerification(env: Bindings, entry: VerificationEntry): Promise<boolean> {
  try {
    await writeSessionFact(env, { kind: 'verified', entry });
    return true;
  } catch (writeError) {
    const job: VerificationHistoryJob = { kind: 'otp-history', entry };
    return env.MAIL_QUEUE.send(job, { contentType: 'json' }).then(
      () => true,
      (queueError: unknown) => {
        console.error('verification history not written yet', entry.sessionId, String(writeError), String(queueError));
        return false;
      },
    );
  }
}

/** Successful verifications, newest first; `limit` clamped to 1-100 (the query schema defaults it to 50). */
export async function otpHistory(env: Bindings, accountId: string, channel: OtpChannel, limit: number) {
  await historyWritten(accountId);
  const limited = Math.min(Math.max(Math.trunc(limit), 1), 100);
  return accountStore(env, accountId).listVerifications(accountId, channel, limited);
}

export async function otpStatus(env: Bindings, accountId: string | null, channel: OtpChannel, sessionId: string) {
  return (await sessionObject(env, sessionId)?.status(sessionId, accountId, channel)) ?? null;
}
