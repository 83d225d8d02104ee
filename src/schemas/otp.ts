import { z } from '@hono/zod-openapi';
import { LANGUAGES } from '../otp/languages';
import { emailAddress, envelope, hasFields, resourceId, subjectText } from './common';

/** The code's length when a send does not name one. */
export const DEFAULT_OTP_DIGITS = 6;

const expiresInSeconds = z
  .number({ error: 'expected a number of seconds' })
  .int('expected a whole number')
  .min(60, 'must be 60-3600')
  .max(3600, 'must be 60-3600')
  .default(600);
const otpDigits = z
  .number({ error: 'expected a number' })
  .int('expected a whole number')
  .min(4, 'must be 4-10')
  .max(10, 'must be 4-10')
  .default(DEFAULT_OTP_DIGITS);
const verificationLine = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters')
  .refine((value) => !/[\r\n\0]/.test(value), 'must not contain line breaks')
  .openapi({ pattern: '^[^\\r\\n\\x00]*$', description: 'One line shown above the code: no CR, LF or NUL' });

/** A BCP 47 language tag: a language, then an optional script, region and one variant; no extensions. */
const LANGUAGE_TAG =
  /^(?:[A-Za-z]{2,3}|[A-Za-z]{5,8})(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))?$/;

const locale = z
  .string()
  .max(35, 'must be at most 35 characters')
  .regex(LANGUAGE_TAG, 'expected a BCP 47 language tag such as de or pt-BR')
  .openapi({
    example: 'de',
    description: `The language of the mail (BCP 47: language, then optional script, region and one variant, e.g. de, pt-BR, zh-Hant-TW): ${LANGUAGES.join(', ')}; any other language gets English`,
  });

const templateId = resourceId.openapi({
  description:
    'A saved template of the account to make the mail from: `{{code}}` in a body is required; `{{expiresInMinutes}}`, `{{productName}}` and (email verification) `{{magicLink}}` are filled too. Not with subject or verificationLine',
});

/** The browser's Turnstile answer, for a public token that requires the bot check (else ignored). */
const turnstileToken = z
  .string()
  .min(1, 'must not be empty')
  .max(2048, 'must be at most 2048 characters')
  .optional()
  .openapi({
    description:
      "The Turnstile widget's answer, when the public token requires a bot check (403 CHALLENGE_FAILED without a valid one); a server key never needs it",
  });

const sendFields = z.strictObject({
  email: emailAddress,
  expiresInSeconds,
  otpDigits,
  locale: locale.optional(),
  templateId: templateId.optional(),
});

/** POST /api/v1/otp/send (legacy alias): the smallest body. */
export const legacySendBody = sendFields.extend({ turnstileToken });

const serverSendFields = sendFields.extend({
  subject: subjectText.optional(),
  verificationLine: verificationLine.optional(),
});

/** A template brings its own subject and words. */
const templateAlone = <T extends { templateId?: string; subject?: string; verificationLine?: string }>(body: T) =>
  !body.templateId || (body.subject === undefined && body.verificationLine === undefined);
const TEMPLATE_ALONE = {
  message: 'a template brings its own subject and text: give templateId without subject and verificationLine',
  path: ['templateId'],
};
/** What templateAlone says, for the document. */
const TEMPLATE_ALONE_DOC = {
  not: { anyOf: [hasFields('templateId', 'subject'), hasFields('templateId', 'verificationLine')] },
};

/** POST /api/v1/backend-otp/send and /api/v1/email-verification/send */
export const serverSendBody = serverSendFields.refine(templateAlone, TEMPLATE_ALONE).openapi(TEMPLATE_ALONE_DOC);

/** POST /api/v1/instant-otp/send: also a `from` override (a verified sender, or an address on a verified domain). */
export const instantSendBody = serverSendFields
  .extend({
    from: emailAddress
      .optional()
      .openapi({ description: 'A verified sender of the account, or an address on its verified domain' }),
    turnstileToken,
  })
  .refine(templateAlone, TEMPLATE_ALONE)
  .openapi(TEMPLATE_ALONE_DOC);

/** Every verify route. The code's format is checked by the engine (400 INVALID_CODE, no attempt used). */
export const verifyBody = z.strictObject({
  sessionId: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  email: z.string().min(1, 'must not be empty').max(254, 'must be at most 254 characters'),
  // Only the length is a validation error: any other malformed code answers 400 INVALID_CODE.
  code: z
    .string()
    .max(32, 'must be at most 32 characters')
    .openapi({ pattern: '^[0-9]{4,10}$', description: 'The digits of the code (anything else: 400 INVALID_CODE)' }),
});

/** Every resend route: the session, and the address it was sent to (as in verify). */
export const resendBody = z.strictObject({
  sessionId: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  email: emailAddress,
});

/** The resend routes of public tokens (instant OTP and its legacy alias): also the bot check's answer. */
export const publicResendBody = resendBody.extend({ turnstileToken });

/** History lists cap `limit` to 1-100 instead of refusing it (decisions.md); it must be a whole number. */
export const historyQuery = z.object({
  limit: z
    .string()
    .regex(/^-?\d+$/, 'expected a whole number')
    .transform((value) => Math.min(Math.max(Number(value), 1), 100))
    .optional()
    .transform((value) => value ?? 50)
    .openapi({
      type: 'integer',
      default: 50,
      description:
        'Entries to return, newest first. Capped, not refused: a value above 100 is treated as 100, one below 1 (0 or negative) as 1',
    }),
});

export const sessionIdParam = z.object({ sessionId: resourceId });

const sendData = z.object({ sessionId: z.string(), expiresAt: z.string(), email: z.string(), sent: z.boolean() });
export const instantSendResponse = envelope(sendData);

/** GET /api/v1/instant-otp/config: what a browser element needs before its first send. */
export const instantConfigResponse = envelope(
  z.object({
    turnstile: z.object({ siteKey: z.string() }).nullable().openapi({
      description: 'Render Turnstile with this site key and send its answer as turnstileToken; null: no check',
    }),
    languages: z
      .array(z.enum(LANGUAGES))
      .openapi({ description: 'The languages of the mail, the page and the element' }),
    codeLength: z.number().int().openapi({ description: 'Digits of a code sent without otpDigits' }),
  }),
);
export const legacySendResponse = envelope(sendData.omit({ email: true }));
export const emailVerificationSendResponse = envelope(sendData.extend({ hostedVerifyUrl: z.string() }));
export const verifyResponse = envelope(z.object({ verified: z.boolean() }));
const historyEntry = z.object({ id: z.string(), email: z.string(), sentAt: z.string(), verifiedAt: z.string() });
export const historyResponse = envelope(z.object({ verifications: z.array(historyEntry) }));
export const legacyHistoryResponse = envelope(
  z.object({ verifications: z.array(historyEntry.omit({ sentAt: true })) }),
);
export const verificationStatusResponse = envelope(
  z.object({
    sessionId: z.string(),
    email: z.string(),
    status: z.enum(['pending', 'verified', 'locked', 'expired']),
    expiresAt: z.string(),
    verifiedAt: z.string().optional(),
  }),
);

/** GET /verify (the hosted page); an unknown or missing id shows the "expired" state. */
export const verifyPageQuery = z.object({
  sessionId: z.string().optional(),
  token: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: "The one-click link's token: the page shows one button that verifies (the GET does not)" }),
});

/** POST /verify: the hosted page's form (read by the handler; documented here). */
export const verifyPageForm = {
  type: 'object' as const,
  properties: {
    sessionId: { type: 'string' as const },
    email: { type: 'string' as const, format: 'email' },
    code: { type: 'string' as const, pattern: '^[0-9]{4,10}$' },
    token: { type: 'string' as const, description: 'Instead of email and code: the one-click link token' },
  },
  anyOf: [{ required: ['sessionId', 'email', 'code'] }, { required: ['sessionId', 'token'] }],
};

/** POST /verify with `Accept: application/json`: what the page's script shows. */
export const verifyPageAnswer = z.object({
  state: z.enum(['form', 'verified', 'wrong', 'invalid', 'locked', 'expired', 'error']),
  done: z.boolean(),
  tone: z.enum(['info', 'success', 'error']),
  message: z.string(),
});
