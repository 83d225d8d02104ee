import type { Context } from 'hono';
import { anyone, liveMailApi } from '../auth/guards';
import type { AppEnv } from '../env';
import {
  addSender,
  confirmToken,
  removeSender,
  resendConfirmation,
  senderNotFound,
  senderOfToken,
} from '../mail/sender-confirmation';
import { renderSenderPage, type SenderPageState } from '../mail/sender-page';
import { readCapped } from '../middleware/json-body';
import { linksFilling } from '../openapi/document';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import * as schema from '../schemas/senders';
import { readOwnWrite, replicaReads } from '../store/control/reads';
import { findSender, listSenders, type Sender } from '../store/control/senders';
import { HTML, pageHeaders } from './hosted-page';
import { json, ok, route, router } from './route';

// Senders an account adds and confirms itself (the operator's route still vouches for one directly).

const view = (sender: Sender) => ({
  id: sender.id,
  email: sender.email,
  name: sender.name,
  status: sender.verified ? ('verified' as const) : ('pending' as const),
});

const SENDER = {
  id: 'snd_4hz7k2qxmw3ncbt5yr8ep6da',
  email: 'billing@example.com',
  name: 'Example Billing',
  status: 'pending' as const,
};
const common = { tag: 'Senders', guard: liveMailApi, limit: { bucket: 'read' } } as const;

const create = route({
  ...common,
  method: 'post',
  path: '/api/v1/senders',
  summary: 'Add a sender',
  description:
    'Verified at once when the address is on a verified (or partially verified) domain of the account. Otherwise pending: a confirmation mail goes to the address, and one press on its linked page (within 24 h) verifies it.',
  body: schema.createSenderBody,
  bodyExample: { email: SENDER.email, name: SENDER.name },
  success: {
    status: 201,
    content: json(schema.senderResponse, { success: true, data: SENDER }),
    links: linksFilling('senderId', '$response.body#/data/id', {
      getSender: ['get', '/api/v1/senders/{senderId}'],
      resendSenderConfirmation: ['post', '/api/v1/senders/{senderId}/resend'],
      deleteSender: ['delete', '/api/v1/senders/{senderId}'],
    }),
  },
  errors: ['SMTP_NOT_CONFIGURED'],
});

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/senders',
  summary: 'List senders',
  query: pageQuery,
  success: {
    status: 200,
    content: json(schema.senderListResponse, {
      success: true,
      data: { senders: [{ ...SENDER, status: 'verified' }], total: 1, page: 1, totalPages: 1, nextCursor: null },
    }),
  },
});

const get = route({
  ...common,
  method: 'get',
  path: '/api/v1/senders/{senderId}',
  summary: 'Get a sender',
  params: schema.senderIdParam,
  success: { status: 200, content: json(schema.senderResponse, { success: true, data: SENDER }) },
  errors: ['SENDER_NOT_FOUND'],
});

const remove = route({
  ...common,
  method: 'delete',
  path: '/api/v1/senders/{senderId}',
  summary: 'Remove a sender',
  params: schema.senderIdParam,
  success: {
    status: 200,
    content: json(schema.senderDeletedResponse, { success: true, data: { id: SENDER.id, deleted: true } }),
  },
  errors: ['SENDER_NOT_FOUND'],
});

const resend = route({
  ...common,
  method: 'post',
  path: '/api/v1/senders/{senderId}/resend',
  summary: "Mail a pending sender's confirmation again",
  description:
    'A new link (the earlier one stops working). A verified sender is answered as it is, and nothing is mailed.',
  params: schema.senderIdParam,
  success: { status: 200, content: json(schema.senderResponse, { success: true, data: SENDER }) },
  errors: ['SENDER_NOT_FOUND', 'SMTP_NOT_CONFIGURED'],
});

const MAX_FORM_BYTES = 1024;

const showPage = route({
  method: 'get',
  path: '/confirm-sender',
  tag: 'Senders',
  summary: 'The hosted sender confirmation page (HTML)',
  description: 'Shows one button; opening the link confirms nothing (mail scanners open links).',
  guard: anyone,
  query: schema.confirmSenderQuery,
  unknownQuery: 'ignored',
  success: { status: 200, description: 'The button that confirms', content: HTML },
  pages: { 404: { description: 'The page for an unknown, used or expired link', content: HTML } },
});

const pressPage = route({
  method: 'post',
  path: '/confirm-sender',
  tag: 'Senders',
  summary: 'Confirm a sender (the hosted page’s button)',
  guard: anyone,
  form: { mediaType: 'application/x-www-form-urlencoded', schema: schema.confirmSenderForm, example: { token: 'a…' } },
  success: { status: 200, description: 'The sender is verified', content: HTML },
  pages: { 404: { description: 'The page for an unknown, used or expired link', content: HTML } },
  errors: ['PAYLOAD_TOO_LARGE'],
});

function page(c: Context<AppEnv>, state: SenderPageState) {
  const nonce = crypto.randomUUID().replaceAll('-', '');
  const headers = pageHeaders(`default-src 'none'; style-src 'nonce-${nonce}'`);
  return c.html(renderSenderPage(state, nonce), state.kind === 'invalid' ? 404 : 200, headers);
}

export const senderRoutes = router()
  .openapi(create, async (c) => {
    const { email, name } = c.req.valid('json');
    return ok(c, view(await addSender(c.env, c.var.credential.accountId, { email, name: name ?? null })), 201);
  })
  .openapi(list, async (c) => {
    const request = pageRequest(c.req.valid('query'));
    const found = await listSenders(replicaReads(c.env.DB), c.var.credential.accountId, request);
    return ok(c, pageData('senders', { ...found, items: found.items.map(view) }, request));
  })
  .openapi(get, async (c) => {
    const { senderId } = c.req.valid('param');
    const sender = await readOwnWrite(c.env.DB, (db) => findSender(db, c.var.credential.accountId, senderId));
    if (!sender) throw senderNotFound();
    return ok(c, view(sender));
  })
  .openapi(remove, async (c) => {
    const { senderId } = c.req.valid('param');
    await removeSender(c.env, c.var.credential.accountId, senderId);
    return ok(c, { id: senderId, deleted: true as const });
  })
  .openapi(resend, async (c) => {
    const { senderId } = c.req.valid('param');
    return ok(c, view(await resendConfirmation(c.env, c.var.credential.accountId, senderId)));
  })
  .openapi(showPage, async (c) => {
    const { token = '' } = c.req.valid('query');
    const sender = await senderOfToken(c.env, token);
    return page(c, sender ? { kind: 'confirm', email: sender.email, token } : { kind: 'invalid' });
  })
  .openapi(pressPage, async (c) => {
    const form = new URLSearchParams(new TextDecoder().decode(await readCapped(c, MAX_FORM_BYTES)));
    const sender = await confirmToken(c.env, form.get('token') ?? '');
    return page(c, sender ? { kind: 'confirmed', email: sender.email } : { kind: 'invalid' });
  });
