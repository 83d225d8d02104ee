// What the browser tests share: Chromium (Debian's, never a downloaded one), the service's inbox, and the
// verification sends they start from.
import { randomUUID } from 'node:crypto';
import { type Browser, chromium } from 'playwright-core';
import { expect } from 'vitest';
import type { E2eService } from './global-setup';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });

export type SendData = { sessionId: string; email: string; sent: boolean; expiresAt: string; hostedVerifyUrl: string };
type MaildevMail = { to: { address: string }[]; subject: string; text: string };

export const uniqueEmail = (tag: string) => `e2e-${tag}-${randomUUID().slice(0, 8)}@example.com`;

/** Same length, different last digit. */
export const wrongCodeFor = (code: string) => code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);

/** POST /api/v1/email-verification/send with a server key; the send must have gone out. */
export async function sendVerification(service: E2eService, key: string, email: string): Promise<SendData> {
  const res = await fetch(`${service.baseUrl}/api/v1/email-verification/send`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  const json = (await res.json()) as { data: SendData };
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(json.data.sent).toBe(true);
  return json.data;
}

/** The text of the mail maildev received for this (unique) address (the first with `subject`, when given). */
export async function mailTextFor(service: E2eService, email: string, subject?: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const mails = (await (await fetch(`${service.inboxUrl}/email`)).json()) as MaildevMail[];
    const mail = mails.find(
      (m) =>
        m.to.some((to) => to.address.toLowerCase() === email.toLowerCase()) &&
        (subject === undefined || m.subject === subject),
    );
    if (mail) return mail.text;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no mail for ${email} in maildev`);
}

/** The code from the mail maildev received for this (unique) address (the first with `subject`, when given). */
export async function codeFromInbox(service: E2eService, email: string, subject?: string): Promise<string> {
  const text = await mailTextFor(service, email, subject);
  const code = /^\s*(\d{4,10})\s*$/m.exec(text)?.[1];
  if (!code) throw new Error(`no code in the mail to ${email}: ${JSON.stringify(text)}`);
  return code;
}
