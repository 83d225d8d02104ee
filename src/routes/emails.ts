import type { Context } from 'hono';
import type { ApiKeyCredential } from '../auth/credential';
import { mailApi } from '../auth/guards';
import { requireRoutes } from '../config';
import type { GuardedEnv } from '../env';
import { acceptEmails, queuedView } from '../mail/accept';
import type { Sender } from '../mail/compose';
import { cancelEmail, moveEmail } from '../mail/scheduled';
import { MAX_ATTACHMENT_BODY_BYTES } from '../middleware/json-body';
import { countHits } from '../middleware/rate-limit';
import { linksFilling } from '../openapi/document';
import {
  batchBody,
  batchResponse,
  canceledResponse,
  emailIdParam,
  queuedResponse,
  queueEmailBody,
  rescheduleBody,
  rescheduledResponse,
} from '../schemas/emails';
import type { NewEmail } from '../store/account/emails';
import { json, ok, route, router } from './route';

export const QUEUED_EXAMPLE = {
  success: true as const,
  data: { id: 'em_5kq2x7cu3ypmx4ndzv2a', status: 'QUEUED' as const },
};

/** Follow a queued email (its id at `idAt`) to its detail, a move and a cancel (for clients and stateful fuzzers). */
export const emailLinks = (idAt = '$response.body#/data/id') =>
  linksFilling('emailId', idAt, {
    getEmail: ['get', '/api/v1/emails/{emailId}'],
    rescheduleEmail: ['patch', '/api/v1/emails/{emailId}'],
    cancelEmail: ['post', '/api/v1/emails/{emailId}/cancel'],
  });

/** Errors of every route that queues mail (routes 1, 3, 4). */
export const QUEUE_ERRORS = ['SENDER_NOT_VERIFIED', 'SMTP_NOT_CONFIGURED'] as const;

type MailContext = Context<GuardedEnv<ApiKeyCredential>>;

/**
 * An example scheduled time must be valid whenever the document is read: tomorrow, 09:00 UTC. A getter, read
 * when the document is served, because a Worker's clock reads 1970 while its module loads.
 */
const withTomorrow9am = <T extends object>(fields: T) =>
  Object.defineProperty({ ...fields }, 'scheduledAt', {
    enumerable: true,
    get: () => `${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T09:00:00.000Z`,
  }) as T & { scheduledAt: string };

/** Who is sending, as the mail pipeline needs it: the account, and whether with a test key. */
export const senderOf = (c: MailContext): Sender => ({
  accountId: c.var.credential.accountId,
  test: c.var.credential.mode === 'test',
});

/** What the routes that queue mail from a request body share (routes 1, 3 and the batch). */
export const SENDING = {
  tag: 'Mail',
  guard: mailApi,
  limit: { bucket: 'mail' },
  idempotent: true,
  bodyLimit: MAX_ATTACHMENT_BODY_BYTES,
} as const;

const queueEmail = route({
  ...SENDING,
  method: 'post',
  path: '/api/v1/emails',
  summary: 'Queue an email',
  description: 'With `scheduledAt` the email is SCHEDULED and goes out at that time (within a minute).',
  body: queueEmailBody,
  bodyExample: {
    to: ['ada@example.com'],
    subject: 'Your receipt',
    html: '<p>Thanks, {{name}}!</p>',
    text: 'Thanks, {{name}}!',
    vars: { name: 'Ada' },
    priority: 'NORMAL',
    cc: 'billing@example.com',
    bcc: 'audit@example.com',
    replyTo: 'support@example.com',
    tags: [{ name: 'category', value: 'receipt' }],
    headers: { 'X-Entity-Ref-ID': 'order-1234' },
    attachments: [{ filename: 'receipt.txt', content: 'VGhhbmtzIQ==', contentType: 'text/plain' }],
  },
  success: { status: 200, content: json(queuedResponse, QUEUED_EXAMPLE), links: emailLinks() },
  errors: [...QUEUE_ERRORS, 'TEMPLATE_NOT_FOUND', 'DAILY_LIMIT_REACHED'],
});

const queueBatch = route({
  ...SENDING,
  method: 'post',
  path: '/api/v1/emails/batch',
  summary: 'Queue up to 100 emails at once',
  description:
    'All or none: one invalid email refuses the whole batch (the message names `emails[i].field`). Each email counts against the rate limits and the daily allowance; `Idempotency-Key` covers the whole batch. Answers in input order.',
  body: batchBody,
  bodyExample: {
    emails: [
      { to: 'ada@example.com', subject: 'Your receipt', text: 'Thanks, Ada!' },
      { to: 'grace@example.com', subject: 'Your receipt', text: 'Thanks, Grace!' },
    ],
  },
  success: {
    status: 200,
    content: json(batchResponse, {
      success: true,
      data: [QUEUED_EXAMPLE.data, { id: 'em_q7d3kz2mx4ncd5ty8hbe', status: 'QUEUED' }],
    }),
    links: emailLinks('$response.body#/data/0/id'),
  },
  errors: [...QUEUE_ERRORS, 'TEMPLATE_NOT_FOUND', 'DAILY_LIMIT_REACHED'],
});

const cancelEmailRoute = route({
  method: 'post',
  path: '/api/v1/emails/{emailId}/cancel',
  tag: 'Mail',
  summary: 'Cancel a scheduled email',
  description: 'Only while it is SCHEDULED: once it has left for delivery the answer is 409 EMAIL_NOT_CANCELABLE.',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: emailIdParam,
  success: {
    status: 200,
    content: json(canceledResponse, { success: true, data: { id: QUEUED_EXAMPLE.data.id, status: 'CANCELED' } }),
  },
  errors: ['EMAIL_NOT_FOUND', 'EMAIL_NOT_CANCELABLE'],
});

const rescheduleEmail = route({
  method: 'patch',
  path: '/api/v1/emails/{emailId}',
  tag: 'Mail',
  summary: 'Move a scheduled email',
  description: 'Only while it is SCHEDULED (409 EMAIL_NOT_SCHEDULED otherwise).',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: emailIdParam,
  body: rescheduleBody,
  bodyExample: withTomorrow9am({}),
  success: {
    status: 200,
    content: json(rescheduledResponse, {
      success: true,
      data: withTomorrow9am({ id: QUEUED_EXAMPLE.data.id, status: 'SCHEDULED' as const }),
    }),
  },
  errors: ['EMAIL_NOT_FOUND', 'EMAIL_NOT_SCHEDULED'],
});

export const emailRoutes = router()
  .openapi(queueEmail, async (c) => {
    requireRoutes(c.env);
    const respond = (emails: NewEmail[]) => queuedView(emails[0]!);
    const emails = await acceptEmails(c.env, senderOf(c), [c.req.valid('json')], {
      countTowardsAllowance: true,
      jsonBody: c.var.jsonBody,
      idempotencyKey: c.var.idempotencyKey,
      respond,
    });
    return ok(c, respond(emails));
  })
  .openapi(queueBatch, async (c) => {
    requireRoutes(c.env);
    const { emails: requests } = c.req.valid('json');
    // The route's limit counted the request as one email; the rest of the batch counts too.
    await countHits(c, 'mail', requests.length - 1);
    const respond = (emails: NewEmail[]) => emails.map(queuedView);
    const emails = await acceptEmails(c.env, senderOf(c), requests, {
      countTowardsAllowance: true,
      jsonBody: c.var.jsonBody,
      batch: true,
      idempotencyKey: c.var.idempotencyKey,
      respond,
    });
    return ok(c, respond(emails));
  })
  .openapi(cancelEmailRoute, async (c) => {
    const { emailId } = c.req.valid('param');
    await cancelEmail(c.env, senderOf(c), emailId);
    return ok(c, { id: emailId, status: 'CANCELED' as const });
  })
  .openapi(rescheduleEmail, async (c) => {
    const { emailId } = c.req.valid('param');
    const { scheduledAt } = c.req.valid('json');
    await moveEmail(c.env, senderOf(c), emailId, scheduledAt);
    return ok(c, { id: emailId, status: 'SCHEDULED' as const, scheduledAt });
  });
