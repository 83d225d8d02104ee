import { z } from '@hono/zod-openapi';
import { emailAddress, envelope, label, pageOf, resourceId } from './common';

/** POST /api/v1/senders and the operator's POST /admin/v1/accounts/{accountId}/senders */
export const createSenderBody = z.strictObject({
  email: emailAddress,
  name: label
    .refine((name) => !/["\\]/.test(name), 'must not contain quotes or backslashes')
    .openapi({
      pattern: '^[^\\x00-\\x1f\\x7f"\\\\]*$',
      description: 'The display name: no quotes, backslashes or control characters',
    })
    .optional(),
});

export const senderIdParam = z.object({ senderId: resourceId });

export const senderDetail = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  status: z.enum(['pending', 'verified']).openapi({
    description:
      'verified: usable as from / senderEmailId. pending: a confirmation mail went to the address; it is verified once someone there presses the button on the linked page (24 h)',
  }),
});

export const senderResponse = envelope(senderDetail);
export const senderListResponse = pageOf('senders', senderDetail);
export const senderDeletedResponse = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));

/** The hosted confirmation page: the link's token (GET shows the button), and the form's (POST confirms). */
export const confirmSenderQuery = z.object({
  token: z.string().max(64).optional().openapi({ description: 'The token of the link in the confirmation mail' }),
});
export const confirmSenderForm = {
  type: 'object' as const,
  required: ['token'],
  properties: { token: { type: 'string' as const, maxLength: 64 } },
};
