// Received mail: the account's messages newest first, one with its parsed fields, its exact bytes, an attachment.
import { liveMailApi } from '../auth/guards';
import { attachmentOf, findMessage, inboundNotFound } from '../inbound/messages';
import { attachmentLinks, inboundPaths } from '../inbound/receive';
import { linksFilling, linkTo } from '../openapi/document';
import { RETENTION_NOTE } from '../retention';
import { pageData, pageRequest } from '../schemas/common';
import * as schema from '../schemas/inbound';
import { accountStore } from '../store/account/client';
import type { InboundMessage } from '../store/account/inbound-messages';
import { bucketsOf } from '../store/placement';
import { json, ok, route, router } from './route';

const common = { tag: 'Inbound' as const, guard: liveMailApi, limit: { bucket: 'read' as const } };

const summary = (m: InboundMessage) => ({
  id: m.id,
  to: m.envelopeTo,
  from: m.from,
  subject: m.subject,
  emailId: m.emailId,
  action: m.action,
  autoReply: m.autoReply,
  deliveryReport: m.deliveryReport,
  spoofed: m.spoofed,
  attachmentCount: m.attachments.length,
  size: m.size,
  receivedAt: new Date(m.receivedAt).toISOString(),
});

const detail = (m: InboundMessage) => {
  return {
    ...summary(m),
    envelopeFrom: m.envelopeFrom,
    toList: m.toList,
    cc: m.cc,
    replyTo: m.replyTo,
    date: m.date,
    messageId: m.messageId,
    inReplyTo: m.inReplyTo,
    references: m.references,
    text: m.text,
    html: m.html,
    headers: m.headers,
    authentication: m.authentication,
    attachments: attachmentLinks(m).map((link, index) => ({
      ...link,
      contentId: m.attachments[index]!.contentId,
      disposition: m.attachments[index]!.disposition,
    })),
    rawUrl: inboundPaths(m.id).rawUrl,
  };
};

const ID = 'inm_3x7kq2mzd5ncw4ty8hbe5vr2a';
const SUMMARY = {
  id: ID,
  to: 'support@acme.inbound.postcode.example',
  from: { address: 'ada@example.com', name: 'Ada Lovelace' },
  subject: 'Re: Your receipt',
  emailId: 'em_k3x7q2mzabcdefghijkl',
  action: 'webhook' as const,
  autoReply: false,
  deliveryReport: false,
  spoofed: false,
  attachmentCount: 1,
  size: 48_213,
  receivedAt: '2026-11-21T22:45:00.000Z',
};
const DETAIL = {
  ...SUMMARY,
  envelopeFrom: 'ada@example.com',
  toList: [{ address: 'support@acme.inbound.postcode.example', name: '' }],
  cc: [],
  replyTo: [],
  date: '2026-11-21T22:44:58.000Z',
  messageId: '<CAF=x1@mail.example.com>',
  inReplyTo: '<em_k3x7q2mzabcdefghijkl@acme.example>',
  references: ['<em_k3x7q2mzabcdefghijkl@acme.example>'],
  text: 'Thanks, got it.',
  html: '<p>Thanks, got it.</p>',
  headers: [{ key: 'subject', value: 'Re: Your receipt' }],
  authentication: { spf: 'pass' as const, dkim: 'pass' as const, dmarc: 'pass' as const },
  attachments: [
    {
      index: 0,
      filename: 'invoice.pdf',
      contentType: 'application/pdf',
      size: 40_960,
      contentId: null,
      disposition: 'attachment' as const,
      url: `/api/v1/inbound/${ID}/attachments/0`,
    },
  ],
  rawUrl: `/api/v1/inbound/${ID}/raw`,
};
const BYTES = (type: string) => ({ [type]: { schema: { type: 'string' as const, format: 'binary' } } });

/** From a listed message to its record, its bytes and (through the record) its attachments. */
const MESSAGE_LINKS = linksFilling('inboundId', '$response.body#/data/messages/0/id', {
  getInbound: ['get', '/api/v1/inbound/{inboundId}'],
  getInboundRaw: ['get', '/api/v1/inbound/{inboundId}/raw'],
});
const ATTACHMENT_LINK = {
  getInboundAttachment: linkTo('get', '/api/v1/inbound/{inboundId}/attachments/{index}', {
    parameters: { inboundId: '$request.path.inboundId', index: '$response.body#/data/attachments/0/index' },
  }),
};

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound',
  summary: 'Received mail, newest first',
  description: `${RETENTION_NOTE.entries} Their raw bytes and attachments go with them.`,
  query: schema.inboundListQuery,
  success: {
    status: 200,
    content: json(schema.inboundListResponse, {
      success: true,
      data: { messages: [SUMMARY], total: 1, page: 1, totalPages: 1, nextCursor: null },
    }),
    links: MESSAGE_LINKS,
  },
});

const get = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/{inboundId}',
  summary: 'A received message: its parsed fields, thread, flags and attachments',
  params: schema.inboundIdParam,
  success: {
    status: 200,
    content: json(schema.inboundResponse, { success: true, data: DETAIL }),
    links: ATTACHMENT_LINK,
  },
  errors: ['INBOUND_NOT_FOUND'],
});

const raw = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/{inboundId}/raw',
  summary: 'The message exactly as received (message/rfc822)',
  params: schema.inboundIdParam,
  success: { status: 200, description: 'The bytes received', content: BYTES('message/rfc822') },
  errors: ['INBOUND_NOT_FOUND'],
});

const attachment = route({
  ...common,
  method: 'get',
  path: '/api/v1/inbound/{inboundId}/attachments/{index}',
  summary: "One attachment's bytes, with its type and name",
  params: schema.attachmentParams,
  success: { status: 200, description: 'The attachment, as its own type', content: BYTES('*/*') },
  errors: ['INBOUND_NOT_FOUND'],
});

export const inboundMessageRoutes = router()
  .openapi(list, async (c) => {
    const { accountId } = c.var.credential;
    const { to, from, since, until, ...paging } = c.req.valid('query');
    const request = pageRequest(paging);
    const filters = {
      ...(to ? { to: to.toLowerCase() } : {}),
      ...(from ? { from: from.toLowerCase() } : {}),
      ...(since ? { since: since.getTime() } : {}),
      ...(until ? { until: until.getTime() } : {}),
    };
    const page = await accountStore(c.env, accountId).listInbound(accountId, filters, request);
    return ok(c, pageData('messages', { ...page, items: page.items.map(summary) }, request));
  })
  .openapi(get, async (c) => {
    const message = await findMessage(c.env, c.var.credential.accountId, c.req.valid('param').inboundId);
    return ok(c, detail(message));
  })
  .openapi(raw, async (c) => {
    const { accountId } = c.var.credential;
    const message = await findMessage(c.env, accountId, c.req.valid('param').inboundId);
    const object = await (await bucketsOf(c.env, accountId)).bodies.get(message.rawKey);
    if (!object) throw inboundNotFound(); // its retention ran meanwhile
    return c.body(object.body, 200, { 'Content-Type': 'message/rfc822' }) as never;
  })
  .openapi(attachment, async (c) => {
    const { accountId } = c.var.credential;
    const { inboundId, index } = c.req.valid('param');
    const message = await findMessage(c.env, accountId, inboundId);
    const { body, headers } = await attachmentOf(c.env, accountId, message, index);
    return c.body(body, 200, headers) as never;
  });
