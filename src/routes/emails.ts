import { mailApi } from '../auth/guards';
import { requireSmtp } from '../config';
import { findEmailDetail, listEmails } from '../db/send-log';
import { ApiError } from '../errors';
import { composeEmail } from '../mail/compose';
import { submitEmail } from '../mail/submit';
import {
  emailDetailResponse,
  emailIdParam,
  emailListResponse,
  queuedResponse,
  queueEmailBody,
  sendLogQuery,
} from '../schemas/emails';
import { json, route, router } from './route';

export const QUEUED_EXAMPLE = {
  success: true as const,
  data: { id: 'em_5kq2x7cu3ypmx4ndzv2a', status: 'QUEUED' as const },
};

/** Follow a queued email to its detail (for clients and stateful fuzzers). */
export const EMAIL_LINKS = {
  getEmail: { operationId: 'getApiV1EmailsEmailId', parameters: { emailId: '$response.body#/data/id' } },
};

/** Errors of every route that queues mail (routes 1, 3, 4). */
export const QUEUE_ERRORS = ['SENDER_NOT_VERIFIED', 'SMTP_NOT_CONFIGURED'] as const;

const queueEmail = route({
  method: 'post',
  path: '/api/v1/emails',
  tag: 'Mail',
  summary: 'Queue an email (1)',
  guard: mailApi,
  limit: { bucket: 'mail' },
  idempotent: true,
  body: queueEmailBody,
  bodyExample: {
    to: ['ada@example.com'],
    subject: 'Your receipt',
    html: '<p>Thanks, {{name}}!</p>',
    text: 'Thanks, {{name}}!',
    vars: { name: 'Ada' },
    priority: 'NORMAL',
  },
  success: { status: 200, content: json(queuedResponse, QUEUED_EXAMPLE), links: EMAIL_LINKS },
  errors: [...QUEUE_ERRORS, 'TEMPLATE_NOT_FOUND', 'DAILY_LIMIT_REACHED'],
});

const sendLog = route({
  method: 'get',
  path: '/api/v1/emails',
  tag: 'Mail',
  summary: 'The send log (2)',
  description: 'Newest first; `status` and `to` narrow it down.',
  guard: mailApi,
  limit: { bucket: 'read' },
  query: sendLogQuery,
  success: {
    status: 200,
    content: json(emailListResponse, {
      success: true,
      data: {
        emails: [
          {
            id: 'em_5kq2x7cu3ypmx4ndzv2a',
            subject: 'Your receipt',
            toAddresses: ['ada@example.com'],
            status: 'SENT',
            createdAt: '2026-11-21T22:45:00.000Z',
          },
        ],
        total: 1,
        page: 1,
        totalPages: 1,
      },
    }),
  },
});

const EMAIL_DETAIL_EXAMPLE = {
  id: 'em_5kq2x7cu3ypmx4ndzv2a',
  status: 'SENT' as const,
  from: 'receipts@example.com',
  to: ['ada@example.com', 'grace@example.com'],
  subject: 'Your receipt',
  messageId: '<em_5kq2x7cu3ypmx4ndzv2a@example.com>',
  createdAt: '2026-11-21T22:45:00.000Z',
  sentAt: '2026-11-21T22:45:01.000Z',
  attempts: 1,
  lastReply: '550 5.1.1 Mailbox unavailable',
  recipients: [
    { email: 'ada@example.com', status: 'SENT' as const },
    { email: 'grace@example.com', status: 'FAILED' as const, reply: '550 5.1.1 Mailbox unavailable' },
  ],
  events: [
    { type: 'queued' as const, at: '2026-11-21T22:45:00.000Z' },
    { type: 'sent' as const, at: '2026-11-21T22:45:01.000Z', detail: 'ada@example.com' },
    {
      type: 'failed' as const,
      at: '2026-11-21T22:45:01.000Z',
      detail: 'grace@example.com: 550 5.1.1 Mailbox unavailable',
    },
  ],
};

const getEmail = route({
  method: 'get',
  path: '/api/v1/emails/{emailId}',
  tag: 'Mail',
  summary: 'One email with its recipients and timeline',
  description:
    'Each recipient has its own status (`reply` when the server refused it); `events` is the timeline: queued, held, released, deferred, sent, failed, suppressed, recovered.',
  guard: mailApi,
  limit: { bucket: 'read' },
  params: emailIdParam,
  success: { status: 200, content: json(emailDetailResponse, { success: true, data: EMAIL_DETAIL_EXAMPLE }) },
  errors: ['EMAIL_NOT_FOUND'],
});

export const emailRoutes = router()
  .openapi(queueEmail, async (c) => {
    requireSmtp(c.env);
    const email = await composeEmail(c.env, c.var.credential.accountId, c.req.valid('json'));
    await submitEmail(c.env, email, { countTowardsAllowance: true });
    return c.json({ success: true as const, data: { id: email.id, status: 'QUEUED' as const } }, 200);
  })
  .openapi(sendLog, async (c) => {
    const { page, limit, status, to } = c.req.valid('query');
    const { emails, total } = await listEmails(c.env.DB, c.var.credential.accountId, page, limit, { status, to });
    return c.json(
      {
        success: true as const,
        data: {
          emails: emails.map((e) => ({
            id: e.id,
            subject: e.subject,
            toAddresses: e.toAddresses,
            status: e.status,
            createdAt: e.createdAt,
          })),
          total,
          page,
          totalPages: Math.ceil(total / limit),
        },
      },
      200,
    );
  })
  .openapi(getEmail, async (c) => {
    const found = await findEmailDetail(c.env.DB, c.var.credential.accountId, c.req.valid('param').emailId);
    if (!found) throw new ApiError('EMAIL_NOT_FOUND', 'emailId: no such email for this account');
    const { email, recipients, events } = found;
    return c.json(
      {
        success: true as const,
        data: {
          id: email.id,
          status: email.status,
          from: email.fromEmail,
          to: email.toAddresses,
          subject: email.subject,
          messageId: email.messageId,
          createdAt: email.createdAt,
          ...(email.sentAt ? { sentAt: email.sentAt } : {}),
          attempts: email.attempts,
          ...(email.lastReply ? { lastReply: email.lastReply } : {}),
          recipients,
          events,
        },
      },
      200,
    );
  });
