import { mailApi } from '../auth/guards';
import { emailDetail } from '../mail/send-log';
import { RETENTION_NOTE } from '../retention';
import { pageData, pageRequest } from '../schemas/common';
import { emailDetailResponse, emailIdParam, emailListResponse, sendLogQuery } from '../schemas/emails';
import { accountStore } from '../store/account/client';
import { json, ok, route, router } from './route';

// Reading what was sent: the send log (route 2) and one email whole. A test key sees only mail queued
// with test keys, a live key only live mail.

const sendLog = route({
  method: 'get',
  path: '/api/v1/emails',
  tag: 'Mail',
  summary: 'The send log',
  description: `Newest first; \`status\`, \`to\`, \`tag\` and \`bounceReason\` narrow it down. ${RETENTION_NOTE.emails}`,
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
        nextCursor: null,
      },
    }),
  },
});

const EMAIL_DETAIL_EXAMPLE = {
  id: 'em_5kq2x7cu3ypmx4ndzv2a',
  status: 'SENT' as const,
  from: 'receipts@example.com',
  to: ['ada@example.com', 'grace@example.com', 'linus@example.com'],
  cc: [],
  bcc: ['audit@example.com'],
  replyTo: ['support@example.com'],
  subject: 'Your receipt',
  messageId: '<em_5kq2x7cu3ypmx4ndzv2a@example.com>',
  html: '<p>Thanks, Ada! Your receipt is attached.</p>',
  text: 'Thanks, Ada! Your receipt is attached.',
  tags: [{ name: 'category', value: 'receipt' }],
  headers: { 'X-Entity-Ref-ID': 'order-1234' },
  attachments: [{ filename: 'receipt.pdf', contentType: 'application/pdf', size: 48213 }],
  test: false,
  createdAt: '2026-11-21T22:45:00.000Z',
  sentAt: '2026-11-21T22:45:01.000Z',
  attempts: 1,
  lastReply: '550 5.1.1 Mailbox unavailable',
  recipients: [
    { email: 'ada@example.com', kind: 'to' as const, status: 'SENT' as const },
    {
      email: 'grace@example.com',
      kind: 'to' as const,
      status: 'FAILED' as const,
      reply: '550 5.1.1 Mailbox unavailable',
    },
    {
      email: 'linus@example.com',
      kind: 'to' as const,
      status: 'BOUNCED' as const,
      reply: '452 4.2.2 Mailbox full',
      bounceType: 'soft' as const,
      bounceReason: 'mailbox_full' as const,
      route: 'smtp',
    },
    { email: 'audit@example.com', kind: 'bcc' as const, status: 'SENT' as const },
  ],
  events: [
    { type: 'queued' as const, at: '2026-11-21T22:45:00.000Z' },
    {
      type: 'sent' as const,
      at: '2026-11-21T22:45:01.000Z',
      detail: 'ada@example.com, linus@example.com, audit@example.com',
    },
    {
      type: 'failed' as const,
      at: '2026-11-21T22:45:01.000Z',
      detail: 'grace@example.com: 550 5.1.1 Mailbox unavailable',
    },
    {
      type: 'bounced' as const,
      at: '2026-11-21T22:47:30.000Z',
      detail: 'linus@example.com: 452 4.2.2 Mailbox full',
      route: 'smtp',
    },
  ],
  replies: [
    {
      inboundId: 'inm_7d2kq5zx3mwa8n4tr6hbe2yc',
      from: { address: 'ada@example.com', name: 'Ada Lovelace' },
      subject: 'Re: Your receipt',
      receivedAt: '2026-11-21T23:02:10.000Z',
      autoReply: false,
      deliveryReport: false,
      url: '/api/v1/inbound/inm_7d2kq5zx3mwa8n4tr6hbe2yc',
    },
  ],
};

const getEmail = route({
  method: 'get',
  path: '/api/v1/emails/{emailId}',
  tag: 'Mail',
  summary: 'One email with its recipients and timeline',
  description: `The email as sent, its body included (\`html\`, \`text\`; a template's rendered with its vars). Each recipient has its own status (\`reply\` when the server refused it, \`bounceType\` and \`bounceReason\` when it bounced); \`events\` is the timeline: queued, scheduled, rescheduled, canceled, held, released, deferred, sent, failed, suppressed, recovered. \`replies\` lists mail received in reply. ${RETENTION_NOTE.emails} A deleted email answers 404.`,
  guard: mailApi,
  limit: { bucket: 'read' },
  params: emailIdParam,
  success: { status: 200, content: json(emailDetailResponse, { success: true, data: EMAIL_DETAIL_EXAMPLE }) },
  errors: ['EMAIL_NOT_FOUND'],
});

export const sendLogRoutes = router()
  .openapi(sendLog, async (c) => {
    const { status, to, tag, bounceReason, ...paging } = c.req.valid('query');
    const request = pageRequest(paging);
    const { accountId, mode } = c.var.credential;
    const owner = { accountId, test: mode === 'test' };
    const page = await accountStore(c.env, owner.accountId).listEmails(owner, request, {
      status,
      to,
      tag,
      bounceReason,
    });
    const emails = page.items.map((e) => ({
      id: e.id,
      subject: e.subject,
      toAddresses: e.toAddresses,
      status: e.status,
      createdAt: e.createdAt,
    }));
    return ok(c, pageData('emails', { ...page, items: emails }, request));
  })
  .openapi(getEmail, async (c) => {
    const { accountId, mode } = c.var.credential;
    const owner = { accountId, test: mode === 'test' };
    const { emailId } = c.req.valid('param');
    const { email, recipients, events, replies, body } = await emailDetail(c.env, owner, emailId);
    return ok(c, {
      id: email.id,
      status: email.status,
      from: email.fromEmail,
      to: email.toAddresses,
      cc: email.ccAddresses,
      bcc: email.bccAddresses,
      replyTo: email.replyTo,
      subject: email.subject,
      messageId: email.messageId,
      ...(body?.html != null ? { html: body.html } : {}),
      ...(body?.text != null ? { text: body.text } : {}),
      tags: email.tags,
      headers: email.headers,
      attachments: email.attachments.map((a) => ({
        filename: a.filename,
        contentType: a.contentType,
        ...(a.contentId ? { contentId: a.contentId } : {}),
        size: a.size,
      })),
      ...(email.scheduledAt ? { scheduledAt: email.scheduledAt } : {}),
      test: email.test,
      createdAt: email.createdAt,
      ...(email.sentAt ? { sentAt: email.sentAt } : {}),
      attempts: email.attempts,
      ...(email.lastReply ? { lastReply: email.lastReply } : {}),
      recipients,
      events,
      replies: replies.map((r) => ({
        inboundId: r.inboundId,
        from: r.from,
        subject: r.subject,
        receivedAt: new Date(r.receivedAt).toISOString(),
        autoReply: r.autoReply,
        deliveryReport: r.deliveryReport,
        url: `/api/v1/inbound/${r.inboundId}`,
      })),
    });
  });
