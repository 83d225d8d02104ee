import { Hono } from 'hono';
import { forgetCredential } from '../auth/credential-cache';
import { requireAdmin } from '../auth/guards';
import { createAccount, findAccount } from '../db/accounts';
import { createApiKey, createOtpToken, revokeApiKey } from '../db/credentials';
import { createSender } from '../db/senders';
import { getSettings, updateSettings } from '../db/settings';
import type { AppEnv } from '../env';
import { ApiError } from '../errors';
import {
  accountIdParam,
  createAccountBody,
  createApiKeyBody,
  createOtpTokenBody,
  createSenderBody,
  keyIdParam,
  updateSettingsBody,
} from '../schemas/admin';
import { releaseHeldMail } from '../queue/producer';
import { validate } from '../validation';

async function requireAccount(db: D1Database, accountId: string) {
  const account = await findAccount(db, accountId);
  if (!account) throw new ApiError('NOT_FOUND', 'accountId: no such account');
  return account;
}

const settingsView = (s: Awaited<ReturnType<typeof getSettings>>) => ({
  frozen: s.frozen,
  dailyAllowance: s.dailyAllowance,
  updatedAt: s.updatedAt,
});

/** Operator API: issuance of accounts, keys, tokens and senders, and the service settings. */
export const adminRoutes = new Hono<AppEnv>()
  .use(requireAdmin())
  .post('/accounts', validate('json', createAccountBody), async (c) => {
    const account = await createAccount(c.env.DB, c.req.valid('json').name);
    return c.json({ success: true, data: { id: account.id, name: account.name } }, 201);
  })
  .post('/accounts/:accountId/api-keys', validate('param', accountIdParam), validate('json', createApiKeyBody), async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const { scopes, name } = c.req.valid('json');
    const { apiKey, key } = await createApiKey(c.env.DB, account.id, scopes, name ?? null);
    return c.json({ success: true, data: { id: apiKey.id, key, scopes: apiKey.scopes } }, 201);
  })
  .delete('/api-keys/:keyId', validate('param', keyIdParam), async (c) => {
    const { keyId } = c.req.valid('param');
    if (!(await revokeApiKey(c.env.DB, keyId))) throw new ApiError('NOT_FOUND', 'keyId: no such API key');
    forgetCredential(keyId);
    return c.json({ success: true, data: { id: keyId, revoked: true } });
  })
  .post('/accounts/:accountId/otp-tokens', validate('param', accountIdParam), validate('json', createOtpTokenBody), async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const allowedIps = c.req.valid('json').allowedIps ?? [];
    const { otpToken, token, analyticsSecret } = await createOtpToken(c.env.DB, account.id, allowedIps);
    return c.json({ success: true, data: { id: otpToken.id, token, analyticsSecret, allowedIps } }, 201);
  })
  .post('/accounts/:accountId/senders', validate('param', accountIdParam), validate('json', createSenderBody), async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const { email, name } = c.req.valid('json');
    const sender = await createSender(c.env.DB, account.id, email, name ?? null);
    return c.json({ success: true, data: { id: sender.id, email: sender.email, name: sender.name } }, 201);
  })
  .get('/settings', async (c) => c.json({ success: true, data: settingsView(await getSettings(c.env.DB)) }))
  .put('/settings', validate('json', updateSettingsBody), async (c) => {
    const settings = await updateSettings(c.env.DB, c.req.valid('json'));
    // Unfreezing releases every held email (also when it was not frozen: releasing is idempotent).
    if (!settings.frozen) await releaseHeldMail(c.env);
    return c.json({ success: true, data: settingsView(settings) });
  });
