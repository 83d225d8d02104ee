// A browser for the dashboard's route tests: a cookie jar, forms posted as a browser posts them, and sign-in with
// the code read from the test SMTP inbox.
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import { buildApp } from '../../src/app';
import { admin, eventually, inbox, uniqueAddress } from './api';
import type { Account } from './responses';

/** At least `count` sign-in mails to `email`, oldest first. */
export const signInMails = (email: string, count = 1) =>
  eventually(async () => {
    const codes = (await inbox(email)).filter((m) => m.subject === 'Your postcode sign-in code');
    return codes.length >= count ? codes : undefined;
  }, `${count} sign-in mails to ${email}`);

/**
 * The code of the `count`-th sign-in mail to `email` (a member also gets the mail saying they were added, in any
 * order with the codes).
 */
export async function signInCode(email: string, count = 1): Promise<string> {
  const mails = await signInMails(email, count);
  const code = /^\s*(\d{6})\s*$/m.exec(mails[count - 1]!.text)?.[1];
  if (!code) throw new Error(`no code in the sign-in mail to ${email}`);
  return code;
}

export type Page = { status: number; headers: Headers; text: string; location: string | null };

/** `name="…" value="…"` of a hidden field in a page. */
export function fieldValue(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no field ${name} in the page`);
  return value.replaceAll('&amp;', '&').replaceAll('&quot;', '"');
}

export class Browser {
  readonly cookies = new Map<string, string>();
  /** Each browser has its own address unless told (the sign-in limits count per IP). */
  readonly ip: string;

  constructor(
    readonly origin = 'http://localhost:8787',
    readonly options: { ip?: string; bindings?: Cloudflare.Env } = {},
  ) {
    const byte = () => Math.floor(Math.random() * 254) + 1;
    this.ip = options.ip ?? `10.${byte()}.${byte()}.${byte()}`;
  }

  async request(method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const headers: Record<string, string> = {
      ...(cookie ? { Cookie: cookie } : {}),
      'CF-Connecting-IP': this.ip,
      'User-Agent': 'postcode-tests',
      ...init.headers,
    };
    const request = new Request(`${this.origin}${path}`, { method, headers, body: init.body, redirect: 'manual' });
    let res: Response;
    if (this.options.bindings) {
      const ctx = createExecutionContext();
      res = await buildApp().fetch(request, this.options.bindings, ctx);
      await waitOnExecutionContext(ctx);
    } else {
      res = await exports.default.fetch(request);
    }
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name!);
      else this.cookies.set(name!, value!);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('Location') };
  }

  get = (path: string) => this.request('GET', path);

  /** The CSRF cookie's value (fetched with the login page when the jar has none yet). */
  async csrf(): Promise<string> {
    if (!this.cookies.has('pc_csrf')) await this.get('/dashboard/login');
    return this.cookies.get('pc_csrf')!;
  }

  /** A form as a browser posts it: URL-encoded, with this dashboard's Origin and the CSRF token unless told. */
  async post(
    path: string,
    fields: Record<string, string> = {},
    options: { csrf?: string | null; origin?: string } = {},
  ) {
    const csrf = options.csrf === undefined ? await this.csrf() : options.csrf;
    const body = new URLSearchParams({ ...fields, ...(csrf === null ? {} : { csrf }) }).toString();
    return this.request('POST', path, {
      body,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: options.origin ?? this.origin },
    });
  }

  /** Signs in with the code mailed to `email` (the `count`-th code mailed to it); the page after sign-in. */
  async signIn(email: string, count = 1): Promise<Page> {
    const started = await this.post('/dashboard/login', { email, next: '/dashboard/members' });
    expect(started.status, started.text).toBe(200);
    const code = await signInCode(email, count);
    const done = await this.post('/dashboard/login/code', {
      email,
      sessionId: fieldValue(started.text, 'sessionId'),
      code,
      next: '/dashboard/members',
    });
    expect(done.status, done.text).toBe(303);
    return done;
  }
}

/** A fresh account with no credentials: its id. */
export async function bareAccount(name: string): Promise<string> {
  const res = await admin<Account>('POST', '/admin/v1/accounts', { name });
  expect(res.status).toBe(201);
  return res.json.data.id;
}

/** A fresh account and a member of it with `role`, signed in in a new browser. */
export async function signedInMember(role: 'owner' | 'admin' | 'developer' | 'viewer', accountId?: string) {
  const account = accountId ?? (await bareAccount(`dashboard ${role}`));
  const email = uniqueAddress(role);
  const added = await admin('POST', `/admin/v1/accounts/${account}/members`, { email, role });
  expect(added.status, JSON.stringify(added.json)).toBe(201);
  const browser = new Browser();
  await browser.signIn(email);
  return { browser, email, accountId: account, memberId: (added.json.data as { id: string }).id };
}

/** A fresh mail_api key of the account, live unless told. */
export async function mailKey(accountId: string, mode: 'live' | 'test' = 'live'): Promise<string> {
  const res = await admin<{ key: string }>('POST', `/admin/v1/accounts/${accountId}/api-keys`, {
    scopes: ['mail_api'],
    mode,
  });
  expect(res.status).toBe(201);
  return res.json.data.key;
}
