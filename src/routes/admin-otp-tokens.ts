// Operator API: public OTP tokens issued (shown once) and changed (IP allowlist, Turnstile bot check, send policy).
import { forgetCredential } from '../auth/credential-cache';
import { operator } from '../auth/guards';
import { sealTurnstile } from '../auth/turnstile';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { linksFilling } from '../openapi/document';
import * as schema from '../schemas/admin';
import { recordAudit } from '../store/control/audit-log';
import { changeOtpToken, createOtpToken, OPEN_POLICY, type OtpToken } from '../store/control/otp-tokens';
import { requireAccount } from './admin';
import { json, ok, route, router } from './route';

const common = { tag: 'Operator', guard: operator } as const;
const TOKEN_ID = 'otk_b3ghkq4mz2ytw6xrc7n5';
const TURNSTILE = { siteKey: '0x4AAAAAAAB3c9kqz2mX7fNw' };
const POLICY = { domainSendsPerHour: 50, blockDisposable: true, blockSubaddresses: false };

/** A token as the operator sees it: never the token, its analytics secret or its Turnstile secret. */
export const otpTokenView = (t: OtpToken) => ({
  id: t.id,
  allowedIps: t.allowedIps,
  turnstile: t.turnstile ? { siteKey: t.turnstile.siteKey } : null,
  policy: t.policy,
  createdAt: t.createdAt,
  revokedAt: t.revokedAt,
});

const createOtpTokenRoute = route({
  ...common,
  method: 'post',
  path: '/admin/v1/accounts/{accountId}/otp-tokens',
  summary: 'Issue a public OTP token and its analytics secret',
  params: schema.accountIdParam,
  body: schema.createOtpTokenBody,
  bodyExample: { allowedIps: ['203.0.113.0/24'] },
  success: {
    status: 201,
    content: json(schema.otpTokenCreatedResponse, {
      success: true,
      data: {
        id: TOKEN_ID,
        token: 'pc_otp_m2x7kq4zf3nwd5ty8hcb6rjp2gkfv3xa',
        analyticsSecret: 'pc_otp_sec_q4zf3nwd5ty8hcb6rjp2gkfv3xam2x7k',
        allowedIps: ['203.0.113.0/24'],
        turnstile: null,
        policy: OPEN_POLICY,
      },
    }),
    links: linksFilling('tokenId', '$response.body#/data/id', {
      changeOtpToken: ['patch', '/admin/v1/otp-tokens/{tokenId}'],
    }),
  },
});

const changeOtpTokenRoute = route({
  ...common,
  method: 'patch',
  path: '/admin/v1/otp-tokens/{tokenId}',
  summary: "Change a public OTP token's IP allowlist, bot check or send policy",
  description:
    'A field left out keeps its value, and so does each field of `policy` left out; `turnstile: null` takes the bot check off, `policy.domainSendsPerHour: null` the domain cap. Requests already authenticated with the token may see the old settings for up to 10 s.',
  params: schema.tokenIdParam,
  body: schema.changeOtpTokenBody,
  bodyExample: {
    turnstile: { siteKey: TURNSTILE.siteKey, secret: '0x4AAAAAAAB3c9kqz2mX7fNw_secret_example' },
    policy: POLICY,
  },
  success: {
    status: 200,
    content: json(schema.otpTokenResponse, {
      success: true,
      data: {
        id: TOKEN_ID,
        allowedIps: [],
        turnstile: TURNSTILE,
        policy: POLICY,
        createdAt: '2026-11-21T22:40:00.000Z',
        revokedAt: null,
      },
    }),
  },
  errors: ['NOT_FOUND'],
});

const sealed = (env: Bindings, setting: { siteKey: string; secret: string } | null | undefined) =>
  setting ? sealTurnstile(env, setting) : setting;

export const adminOtpTokenRoutes = router()
  .openapi(createOtpTokenRoute, async (c) => {
    const account = await requireAccount(c.env.DB, c.req.valid('param').accountId);
    const body = c.req.valid('json');
    const allowedIps = body.allowedIps ?? [];
    const turnstile = (await sealed(c.env, body.turnstile)) ?? null;
    const policy = { ...OPEN_POLICY, ...body.policy };
    const settings = { allowedIps, turnstile, policy };
    const { otpToken, token, analyticsSecret } = await createOtpToken(c.env.DB, account.id, settings);
    const detail = { allowedIps, turnstile: turnstile?.siteKey ?? null, policy };
    await recordAudit(c.env.DB, account.id, {
      actor: 'operator',
      action: 'otp_token.created',
      target: otpToken.id,
      detail,
    });
    const { id, turnstile: shown } = otpTokenView(otpToken);
    return ok(c, { id, token, analyticsSecret, allowedIps, turnstile: shown, policy }, 201);
  })
  .openapi(changeOtpTokenRoute, async (c) => {
    const { tokenId } = c.req.valid('param');
    const body = c.req.valid('json');
    const otpToken = await changeOtpToken(c.env.DB, tokenId, {
      allowedIps: body.allowedIps,
      turnstile: await sealed(c.env, body.turnstile),
      policy: body.policy,
    });
    if (!otpToken) throw new ApiError('NOT_FOUND', 'tokenId: no such live OTP token');
    forgetCredential(tokenId);
    const detail = {
      ...(body.allowedIps ? { allowedIps: body.allowedIps } : {}),
      ...(body.turnstile !== undefined ? { turnstile: body.turnstile?.siteKey ?? null } : {}),
      ...(body.policy ? { policy: body.policy } : {}),
    };
    await recordAudit(c.env.DB, otpToken.accountId, {
      actor: 'operator',
      action: 'otp_token.changed',
      target: tokenId,
      detail,
    });
    return ok(c, otpTokenView(otpToken));
  });
