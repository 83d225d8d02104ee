import { z } from '@hono/zod-openapi';
import { ROLES } from '../dashboard/roles';
import { emailAddress, envelope, pageOf } from './common';

const role = z.enum(ROLES).openapi({
  description:
    'owner: everything; admin: everything but owners; developer: everything but members and revoking keys; viewer: reads only',
});

export const createMemberBody = z.strictObject({ email: emailAddress, role });

const member = z.object({
  id: z.string(),
  email: z.string().openapi({ description: 'The address the member signs in with (lower-cased)' }),
  role,
  createdAt: z.string(),
  invitedBy: z.string().nullable().openapi({ description: 'The member who added this one; null: the operator' }),
});

export const memberResponse = envelope(member);
export const memberListResponse = pageOf('members', member);
