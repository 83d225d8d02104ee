// API keys and public OTP tokens: create (the secret shown once), revoke, when last used; a token's IP allowlist.
import type { Context } from 'hono';
import { z } from 'zod';
import { forgetCredential } from '../../auth/credential-cache';
import { can } from '../../dashboard/roles';
import { Csrf, Notice, Secret } from '../../dashboard/views/layout';
import { ApiError } from '../../errors';
import { createApiKeyBody, createOtpTokenBody } from '../../schemas/admin';
import { recordAudit } from '../../store/control/audit-log';
import { createApiKey, listApiKeys, revokeApiKey } from '../../store/control/credentials';
import {
  createOtpToken,
  listOtpTokens,
  OPEN_POLICY,
  revokeOtpToken,
  setAllowedIps,
} from '../../store/control/otp-tokens';
import { invalidInput } from '../../validation';
import { KeyRows, TokenRows } from './key-tables';
import { act, formFields, type PageDeclaration, type PageEnv, render, shownOnPage } from './page';

const FIRST_100 = { limit: 100, page: 1, after: null };
const ipsForm = z.object({ allowedIps: z.string().optional() });
const DONE: Record<string, string> = {
  'key-revoked': 'API key revoked: it is refused from now on.',
  'token-revoked': 'OTP token revoked: it is refused from now on.',
  ips: 'Allowlist saved.',
};

/** An allowlist as typed: one address or range per line (none: any address). */
const ipsOf = (text: string | null) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

async function keysPage(c: Context<PageEnv>, notice?: unknown) {
  const { accountId, role } = c.var.signedIn;
  const [keys, tokens] = await Promise.all([
    listApiKeys(c.env.DB, accountId, FIRST_100),
    listOtpTokens(c.env.DB, accountId, FIRST_100),
  ]);
  const writable = can(role, 'write');
  const revocable = can(role, 'revoke_keys');
  const { csrf } = c.var.frame;
  const done = DONE[c.req.query('done') ?? ''];
  return render(
    c,
    'API keys',
    <>
      <h1>API keys and OTP tokens</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <h2>API keys</h2>
      {writable ? (
        <form class="inline panel" method="post" action="/dashboard/keys">
          <Csrf token={csrf} />
          <label>
            Name
            <input name="name" maxlength={200} />
          </label>
          <fieldset class="inline">
            <legend>Scopes</legend>
            <label class="check">
              <input type="checkbox" name="scopes" value="mail_api" checked /> mail_api
            </label>
            <label class="check">
              <input type="checkbox" name="scopes" value="server_otp" /> server_otp
            </label>
          </fieldset>
          <label>
            Mode
            <select name="mode">
              <option value="live">live</option>
              <option value="test">test (mail never sent)</option>
            </select>
          </label>
          <button type="submit">Create key</button>
        </form>
      ) : null}
      <KeyRows keys={keys.items} csrf={csrf} revocable={revocable} />
      <h2>Public OTP tokens</h2>
      <p class="muted">For instant OTP from browsers; an empty allowlist accepts any address.</p>
      {writable ? (
        <form class="inline panel" method="post" action="/dashboard/otp-tokens">
          <Csrf token={csrf} />
          <label>
            IP allowlist (one address or range per line)
            <textarea name="allowedIps" rows={2} />
          </label>
          <button type="submit">Create token</button>
        </form>
      ) : null}
      <TokenRows tokens={tokens.items} csrf={csrf} writable={writable} revocable={revocable} />
    </>,
  );
}

/** Creating answers the page itself (not a redirect): the secret is shown in it this once, never in a URL. */
async function created(c: Context<PageEnv>, make: () => Promise<unknown>) {
  try {
    const shown = await make();
    c.status(201);
    return keysPage(c, shown);
  } catch (error) {
    return shownOnPage(c, error, (notice) => keysPage(c, notice));
  }
}

const audit = (c: Context<PageEnv>, action: string, target: string, detail?: Record<string, unknown>) =>
  recordAudit(c.env.DB, c.var.signedIn.accountId, { actor: c.var.signedIn.email, action, target, detail });

/** The form revoking a key or a token of the account: refused from the next request on (this isolate at once). */
function revocation(
  path: string,
  kind: 'key' | 'otp_token',
  revoke: (db: D1Database, accountId: string, id: string) => Promise<unknown>,
): PageDeclaration {
  return {
    method: 'post',
    path,
    access: 'revoke_keys',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      return act(
        c,
        async () => {
          if (!(await revoke(c.env.DB, c.var.signedIn.accountId, id))) {
            throw new ApiError(
              'NOT_FOUND',
              `${kind === 'key' ? 'keyId: no such API key' : 'no such OTP token'} of this account`,
            );
          }
          forgetCredential(id);
        },
        `/dashboard/keys?done=${kind === 'key' ? 'key' : 'token'}-revoked`,
        (notice) => keysPage(c, notice),
        { action: `${kind}.revoked`, target: id },
      );
    },
  };
}

export const keyPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/keys', access: 'read', handler: (c) => keysPage(c) },
  {
    method: 'post',
    path: '/dashboard/keys',
    access: 'write',
    handler: (c) =>
      created(c, async () => {
        const form = c.var.form;
        const body = createApiKeyBody.safeParse({
          scopes: form.getAll('scopes'),
          ...(form.get('name') ? { name: form.get('name') } : {}),
          mode: form.get('mode') ?? 'live',
        });
        if (!body.success) throw invalidInput(body.error);
        const { scopes, name, mode } = body.data;
        const { apiKey, key } = await createApiKey(c.env.DB, c.var.signedIn.accountId, scopes, name ?? null, mode);
        await audit(c, 'key.created', apiKey.id, { scopes, mode: apiKey.mode, ...(name ? { name } : {}) });
        return (
          <Notice tone="ok">
            <p>API key created. Copy it now: it is shown only this once.</p>
            <Secret label="API key" value={key} />
          </Notice>
        );
      }),
  },
  revocation('/dashboard/keys/:id/revoke', 'key', (db, accountId, id) => revokeApiKey(db, id, accountId)),
  {
    method: 'post',
    path: '/dashboard/otp-tokens',
    access: 'write',
    handler: (c) =>
      created(c, async () => {
        const body = createOtpTokenBody.safeParse({ allowedIps: ipsOf(c.var.form.get('allowedIps')) });
        if (!body.success) throw invalidInput(body.error);
        const allowedIps = body.data.allowedIps ?? [];
        const settings = { allowedIps, turnstile: null, policy: OPEN_POLICY };
        const { otpToken, token, analyticsSecret } = await createOtpToken(c.env.DB, c.var.signedIn.accountId, settings);
        await audit(c, 'otp_token.created', otpToken.id, { allowedIps });
        return (
          <Notice tone="ok">
            <p>Public OTP token created. Copy both now: they are shown only this once.</p>
            <Secret label="Token" value={token} />
            <Secret label="Analytics secret" value={analyticsSecret} />
          </Notice>
        );
      }),
  },
  revocation('/dashboard/otp-tokens/:id/revoke', 'otp_token', revokeOtpToken),
  {
    method: 'post',
    path: '/dashboard/otp-tokens/:id/ips',
    access: 'write',
    handler: (c) => {
      const id = c.req.param('id') ?? '';
      let allowedIps: string[] = [];
      return act(
        c,
        async () => {
          const body = createOtpTokenBody.safeParse({ allowedIps: ipsOf(formFields(c, ipsForm).allowedIps ?? '') });
          if (!body.success) throw invalidInput(body.error);
          allowedIps = body.data.allowedIps ?? [];
          if (!(await setAllowedIps(c.env.DB, c.var.signedIn.accountId, id, allowedIps))) {
            throw new ApiError('NOT_FOUND', 'tokenId: no such live OTP token of this account');
          }
          forgetCredential(id);
        },
        '/dashboard/keys?done=ips',
        (notice) => keysPage(c, notice),
        () => ({ action: 'otp_token.ips_changed', target: id, detail: { allowedIps } }),
      );
    },
  },
];
