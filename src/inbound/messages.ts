// A received message as the API and the dashboard read it: found for its account (or 404), and one attachment's
// bytes with the headers that make a browser save them rather than show them.
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { accountStore } from '../store/account/client';
import type { InboundMessage } from '../store/account/inbound-messages';
import { bucketsOf } from '../store/placement';

export const inboundNotFound = () =>
  new ApiError('INBOUND_NOT_FOUND', 'inboundId: no such received message for this account');

export async function findMessage(env: Bindings, accountId: string, id: string): Promise<InboundMessage> {
  const message = await accountStore(env, accountId).findInbound(accountId, id);
  if (!message) throw inboundNotFound();
  return message;
}

/** The attachment's bytes and headers; 404 when there is no such index, or its retention ran meanwhile. */
export async function attachmentOf(env: Bindings, accountId: string, message: InboundMessage, index: number) {
  const part = message.attachments[index];
  if (!part) {
    throw new ApiError('INBOUND_NOT_FOUND', `index: the message has ${message.attachments.length} attachment(s)`);
  }
  const object = await (await bucketsOf(env, accountId)).attachments.get(part.key);
  if (!object) throw inboundNotFound();
  const name = (part.filename ?? `attachment-${index}`).replace(/["\\\r\n]/g, '_');
  return {
    body: object.body,
    headers: {
      'Content-Type': part.contentType,
      'Content-Disposition': `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`,
      'X-Content-Type-Options': 'nosniff',
    },
  };
}
