import { mailApi } from '../auth/guards';
import { requireSmtp } from '../config';
import { listEmails } from '../db/emails';
import { composeEmail } from '../mail/compose';
import { submitEmail } from '../mail/submit';
import { emailListResponse, pageQuery, queuedResponse, queueEmailBody } from '../schemas/emails';
import { json, route, router } from './route';

export const QUEUED_EXAMPLE = {
  success: true as const,
  data: { id: 'em_5kq2x7cu3ypmx4ndzv2a', status: 'QUEUED' as const },
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
  success: { status: 200, content: json(queuedResponse, QUEUED_EXAMPLE) },
  errors: [...QUEUE_ERRORS, 'TEMPLATE_NOT_FOUND', 'DAILY_LIMIT_REACHED'],
});

const sendLog = route({
  method: 'get',
  path: '/api/v1/emails',
  tag: 'Mail',
  summary: 'The send log (2)',
  guard: mailApi,
  limit: { bucket: 'read' },
  query: pageQuery,
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

export const emailRoutes = router()
  .openapi(queueEmail, async (c) => {
    requireSmtp(c.env);
    const email = await composeEmail(c.env, c.var.credential.accountId, c.req.valid('json'));
    await submitEmail(c.env, email, { countTowardsAllowance: true });
    return c.json({ success: true as const, data: { id: email.id, status: 'QUEUED' as const } }, 200);
  })
  .openapi(sendLog, async (c) => {
    const { page, limit } = c.req.valid('query');
    const { emails, total } = await listEmails(c.env.DB, c.var.credential.accountId, page, limit);
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
  });
