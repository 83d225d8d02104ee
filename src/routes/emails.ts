import { Hono } from 'hono';
import { requireScope } from '../auth/guards';
import { requireSmtp } from '../config';
import { rateLimit } from '../limits/rate-limit';
import { idempotent } from '../middleware/idempotency';
import { listEmails } from '../db/emails';
import type { AppEnv } from '../env';
import { composeEmail } from '../mail/compose';
import { submitEmail } from '../mail/submit';
import { pageQuery, queueEmailBody } from '../schemas/emails';
import { validate } from '../validation';

export const emailRoutes = new Hono<AppEnv>()
  // 1. Queue an email
  .post('/', requireScope('mail_api'), rateLimit('mail'), validate('json', queueEmailBody), idempotent(), async (c) => {
    requireSmtp(c.env);
    const email = await composeEmail(c.env, c.var.credential.accountId, c.req.valid('json'));
    await submitEmail(c.env, email, { countTowardsAllowance: true });
    return c.json({ success: true, data: { id: email.id, status: 'QUEUED' } });
  })
  // 2. The send log
  .get('/', requireScope('mail_api'), rateLimit('read'), validate('query', pageQuery), async (c) => {
    const { page, limit } = c.req.valid('query');
    const { emails, total } = await listEmails(c.env.DB, c.var.credential.accountId, page, limit);
    return c.json({
      success: true,
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
    });
  });
