import type { Bindings } from '../env';
import { ApiError } from '../errors';
import type { IdempotencyKey } from '../middleware/idempotency';
import { checkContentSize } from '../middleware/json-body';
import { enqueueEmails } from '../queue/producer';
import type { NewEmail } from '../store/account/emails';
import { currentSettings } from '../store/control/settings';
import { type ComposedEmail, composeEmail, type MailRequest, type Sender } from './compose';

function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

function dailyLimitReached(now: Date): ApiError {
  const resetAt = nextUtcMidnight(now);
  return new ApiError(
    'DAILY_LIMIT_REACHED',
    'The daily sending allowance is used up; it resets at resetAt (UTC midnight)',
    {
      resetAt: resetAt.toISOString(),
      headers: { 'Retry-After': String(Math.max(Math.ceil((resetAt.getTime() - now.getTime()) / 1000), 1)) },
    },
  );
}

/**
 * Accepts composed emails, all or none. Freeze mode holds NORMAL mail; on route 1 and the batch the account's
 * daily warm-up allowance must have room for their recipients (test-key mail sends nothing and is not counted).
 * The settings come from the control plane (this isolate's copy); reservation and inserts are one transaction in
 * the account's object.
 */
export async function submitEmails(
  env: Bindings,
  composed: ComposedEmail[],
  options: AcceptOptions,
): Promise<NewEmail[]> {
  const emails = composed.map((c) => c.email);
  const counted = options.countTowardsAllowance && !emails[0]!.test;
  const attachments = composed.flatMap((c) => c.attachments);
  const settings = await currentSettings(env.DB);
  const key = options.idempotencyKey;
  // The route's answer, stored under the request's key in the transaction that stores the emails.
  const idempotency =
    key && options.respond
      ? { ...key, status: 200, body: JSON.stringify({ success: true, data: options.respond(emails) }) }
      : null;
  const outcome = await enqueueEmails(env, emails, attachments, {
    countTowardsAllowance: counted,
    settings,
    idempotency,
  });
  if (outcome === 'refused') throw dailyLimitReached(new Date(emails[0]!.createdAt));
  return emails;
}

/**
 * How a route accepts: whether the recipients count towards the allowance, and with an Idempotency-Key the key and
 * `respond`, the data the route answers for the accepted emails (stored under the key, replayed for a retry).
 */
export type AcceptOptions = {
  countTowardsAllowance: boolean;
  idempotencyKey?: IdempotencyKey | undefined;
  respond?: (emails: NewEmail[]) => unknown;
};

/** What the send routes answer for an accepted email. */
export const queuedView = (email: NewEmail) => ({
  id: email.id,
  status: email.scheduledAt ? ('SCHEDULED' as const) : ('QUEUED' as const),
});

/** Attachments of a whole batch, decoded, at most this many bytes together (each email: 10 MB). */
const BATCH_ATTACHMENT_BYTES = 25_000_000;

/** An error of one email of a batch, naming it: `emails[3].templateId: …`. */
function inBatch(error: unknown, index: number): unknown {
  if (!(error instanceof ApiError)) return error;
  const prefix = `emails[${index}]`;
  const details = error.extra.details?.map((d) => ({ ...d, path: `${prefix}.${d.path}` }));
  return new ApiError(error.code, `${prefix}.${error.message}`, { ...error.extra, ...(details ? { details } : {}) });
}

/**
 * Composes and accepts the emails of one request (one, or a batch: all or none, errors naming the email).
 * Only attachment content may take the body past 512 KiB.
 */
export async function acceptEmails(
  env: Bindings,
  sender: Sender,
  requests: MailRequest[],
  options: AcceptOptions & { jsonBody: string; batch?: boolean },
): Promise<NewEmail[]> {
  const attachmentContent = requests.reduce(
    (sum, r) => sum + (r.attachments ?? []).reduce((n, a) => n + (a.content?.length ?? 0), 0),
    0,
  );
  checkContentSize(options.jsonBody, attachmentContent);
  const batch = options.batch === true;
  const composed: ComposedEmail[] = [];
  let attachmentBytes = 0;
  for (const [index, request] of requests.entries()) {
    try {
      const email = await composeEmail(env, sender, request);
      attachmentBytes += email.email.attachments.reduce((n, a) => n + a.size, 0);
      if (attachmentBytes > BATCH_ATTACHMENT_BYTES) {
        throw new ApiError('INVALID_INPUT', `attachments: at most ${BATCH_ATTACHMENT_BYTES / 1_000_000} MB per batch`);
      }
      composed.push(email);
    } catch (error) {
      throw batch ? inBatch(error, index) : error;
    }
  }
  return submitEmails(env, composed, options);
}
