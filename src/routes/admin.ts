import { waitUntil } from 'cloudflare:workers';
import { forgetCredential } from '../auth/credential-cache';
import { operator } from '../auth/guards';
import { ApiError } from '../errors';
import { linksFilling } from '../openapi/document';
import { setBranding } from '../otp/branding';
import { wakeAccountsHoldingMail } from '../queue/producer';
import * as schema from '../schemas/admin';
import { accountStore } from '../store/account/client';
import type { StoredBranding } from '../store/account/otp-branding';
import { findAccount } from '../store/control/accounts';
import { recordAudit } from '../store/control/audit-log';
import { createApiKey, revokeApiKey } from '../store/control/credentials';
import { createSender } from '../store/control/senders';
import { forgetSettings, getSettings, type Settings, updateSettings } from '../store/control/settings';
import { json, ok, route, router } from './route';

/** The account of `accountId`, or 404. */
export async function requireAccount(db: D1Database, accountId: string) {
  const account = await findAccount(db, accountId);
  if (!account) throw new ApiError('NOT_FOUND', 'accountId: no such account');
  return account;
}

const settingsView = (s: Settings) => ({ frozen: s.frozen, dailyAllowance: s.dailyAllowance, updatedAt: s.updatedAt });

const brandingView = (b: StoredBranding) => ({
  accountId: b.accountId,
  productName: b.productName,
  logoUrl: b.logoUrl,
  accentColor: b.accentColor,
  supportEmail: b.supportEmail,
  updatedAt: b.updatedAt,
});

const ACCOUNT_ID = 'acc_7d2kq4mxz3ncw5ty8hbe';
const BRANDING = {
  productName: 'Acme',
  logoUrl: 'https://acme.example/logo.png',
  accentColor: '#4f46e5',
  supportEmail: 'help@acme.example',
};
const SETTINGS = { frozen: false, dailyAllowance: 5000, updatedAt: '2026-11-21T22:40:00.000Z' };
const common = { tag: 'Operator', guard: operator } as const;

const createApiKeyRoute = route({
  ...common,
  method: 'post',
  path: '/admin/v1/accounts/{accountId}/api-keys',
  summary: 'Issue an API key (shown once)',
  params: schema.accountIdParam,
  body: schema.createApiKeyBody,
  bodyExample: { scopes: ['mail_api'], name: 'backend' },
  success: {
    status: 201,
    content: json(schema.apiKeyCreatedResponse, {
      success: true,
      data: {
        id: 'key_q3w7zk2mx4ncd5ty8hbe',
        key: 'pc_key_n4q7zk2mx3bcd5ty8hwe6rjp2gkfm3vx',
        scopes: ['mail_api'],
        mode: 'live',
      },
    }),
    links: linksFilling('keyId', '$response.body#/data/id', { revokeApiKey: ['delete', '/admin/v1/api-keys/{keyId}'] }),
  },
});

const revokeApiKeyRoute = route({
  ...common,
  method: 'delete',
  path: '/admin/v1/api-keys/{keyId}',
  summary: 'Revoke an API key',
  params: schema.keyIdParam,
  success: {
    status: 200,
    content: json(schema.apiKeyRevokedResponse, {
      success: true,
      data: { id: 'key_q3w7zk2mx4ncd5ty8hbe', revoked: true },
    }),
  },
});

const createSenderRoute = route({
  ...common,
  method: 'post',
  path: '/admin/v1/accounts/{accountId}/senders',
  summary: 'Add a verified sender identity',
  params: schema.accountIdParam,
  body: schema.createSenderBody,
  bodyExample: { email: 'hello@acme.example', name: 'Acme' },
  success: {
    status: 201,
    content: json(schema.senderResponse, {
      success: true,
      data: { id: 'snd_x2m4kq7fz3nwd5ty8hcb', email: 'hello@acme.example', name: 'Acme' },
    }),
  },
});

const getOtpBrandingRoute = route({
  ...common,
  method: 'get',
  path: '/admin/v1/accounts/{accountId}/otp-branding',
  summary: "Read an account's OTP branding",
  params: schema.accountIdParam,
  success: {
    status: 200,
    content: json(schema.otpBrandingResponse, {
      success: true,
      data: { accountId: ACCOUNT_ID, ...BRANDING, updatedAt: '2026-11-24T08:00:00.000Z' },
    }),
  },
});

const putOtpBrandingRoute = route({
  ...common,
  method: 'put',
  path: '/admin/v1/accounts/{accountId}/otp-branding',
  summary: 'Set the look of OTP mail and the hosted verify page',
  description:
    'Replaces the branding: a field left out or null is cleared. Other isolates show a change within 10 seconds.',
  params: schema.accountIdParam,
  body: schema.otpBrandingBody,
  bodyExample: BRANDING,
  success: {
    status: 200,
    content: json(schema.otpBrandingResponse, {
      success: true,
      data: { accountId: ACCOUNT_ID, ...BRANDING, updatedAt: '2026-11-24T08:00:00.000Z' },
    }),
  },
});

const getSettingsRoute = route({
  ...common,
  method: 'get',
  path: '/admin/v1/settings',
  summary: 'Read the service settings',
  success: { status: 200, content: json(schema.settingsResponse, { success: true, data: SETTINGS }) },
});

const updateSettingsRoute = route({
  ...common,
  method: 'put',
  path: '/admin/v1/settings',
  summary: 'Freeze mode and the daily warm-up allowance',
  body: schema.updateSettingsBody,
  bodyExample: { frozen: false, dailyAllowance: 5000 },
  success: { status: 200, content: json(schema.settingsResponse, { success: true, data: SETTINGS }) },
});

/** Operator API: issuance of keys and senders, OTP branding, and the service settings. */
export const adminRoutes = router()
  .openapi(createApiKeyRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const { scopes, name, mode } = c.req.valid('json');
    const { apiKey, key } = await createApiKey(c.env.DB, account.id, scopes, name ?? null, mode);
    const detail = { scopes, mode: apiKey.mode, ...(name ? { name } : {}) };
    await recordAudit(c.env.DB, account.id, { actor: 'operator', action: 'key.created', target: apiKey.id, detail });
    return ok(c, { id: apiKey.id, key, scopes: apiKey.scopes, mode: apiKey.mode }, 201);
  })
  .openapi(revokeApiKeyRoute, async (c) => {
    const { keyId } = c.req.valid('param');
    const accountId = await revokeApiKey(c.env.DB, keyId);
    if (!accountId) throw new ApiError('NOT_FOUND', 'keyId: no such API key');
    forgetCredential(keyId);
    await recordAudit(c.env.DB, accountId, { actor: 'operator', action: 'key.revoked', target: keyId });
    return ok(c, { id: keyId, revoked: true as const });
  })
  .openapi(createSenderRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const { email, name } = c.req.valid('json');
    const sender = await createSender(c.env.DB, account.id, email, name ?? null);
    return ok(c, { id: sender.id, email: sender.email, name: sender.name }, 201);
  })
  .openapi(getOtpBrandingRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    return ok(c, brandingView(await accountStore(c.env, account.id).findOtpBranding(account.id)));
  })
  .openapi(putOtpBrandingRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    await setBranding(c.env, account.id, c.req.valid('json'));
    return ok(c, brandingView(await accountStore(c.env, account.id).findOtpBranding(account.id)));
  })
  .openapi(getSettingsRoute, async (c) => ok(c, settingsView(await getSettings(c.env.DB))))
  .openapi(updateSettingsRoute, async (c) => {
    const settings = await updateSettings(c.env.DB, c.req.valid('json'));
    forgetSettings();
    // Unfreezing wakes the accounts that hold mail, after the answer (each also looks again within a minute).
    if (!settings.frozen) waitUntil(wakeAccountsHoldingMail(c.env));
    return ok(c, settingsView(settings));
  });
