// The contract test's calls to the domain and sender routes and the hosted confirmation page (a part of
// openapi-contract.test.ts, kept apart for its length): each operation answers a success and an error.
import { randomUUID } from 'node:crypto';
import { publishRecords } from './shared-service';

type Check = (
  method: string,
  template: string,
  path: string,
  init?: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
) => Promise<{ status: number; json: { data: { id: string } } }>;

/** The token of the link in the `count`-th confirmation mail to `email` (the live one once it arrived). */
async function confirmationToken(inboxUrl: string, email: string, count: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(`${inboxUrl}/email`)).json()) as { to: { address: string }[]; text: string }[];
    const mine = mails.filter((m) => m.to.some((t) => t.address === email));
    const token = mine.length >= count && /\/confirm-sender\?token=([a-z2-7]{32})/.exec(mine.at(-1)!.text)?.[1];
    if (token) return token;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no confirmation mail ${count} arrived for ${email}`);
}

export async function checkDomainsAndSenders(check: Check, mailKey: string, inboxUrl: string): Promise<void> {
  const auth = { token: mailKey };
  const name = `contract-${randomUUID().slice(0, 8)}.example`;
  const domain = (await check('POST', '/api/v1/domains', '/api/v1/domains', { ...auth, body: { name } })).json.data;
  await check('POST', '/api/v1/domains', '/api/v1/domains', { ...auth, body: { name } });
  await check('POST', '/api/v1/domains', '/api/v1/domains', { ...auth, body: { name: 'localhost' } });
  await check('GET', '/api/v1/domains', '/api/v1/domains?limit=5', auth);
  await check('GET', '/api/v1/domains', '/api/v1/domains?limit=0', auth);
  const one = '/api/v1/domains/{domainId}';
  await check('GET', one, `/api/v1/domains/${domain.id}`, auth);
  await check('GET', one, '/api/v1/domains/dom_unknown', auth);
  const inbound = '/api/v1/domains/{domainId}/inbound';
  await check('POST', inbound, `/api/v1/domains/${domain.id}/inbound`, { ...auth, body: {} });
  await publishRecords((domain as unknown as { records: Parameters<typeof publishRecords>[0] }).records);
  for (const action of ['verify', 'rotate-dkim']) {
    const template = `/api/v1/domains/{domainId}/${action}`;
    await check('POST', template, `/api/v1/domains/${domain.id}/${action}`, auth);
    await check('POST', template, `/api/v1/domains/dom_unknown/${action}`, auth);
  }
  await check('POST', inbound, `/api/v1/domains/${domain.id}/inbound`, { ...auth, body: { subdomain: 'in' } });
  await check('POST', inbound, '/api/v1/domains/dom_unknown/inbound', { ...auth, body: {} });
  await check('DELETE', inbound, `/api/v1/domains/${domain.id}/inbound`, auth);
  await check('DELETE', inbound, '/api/v1/domains/dom_unknown/inbound', auth);
  await check('DELETE', one, `/api/v1/domains/${domain.id}`, auth);
  await check('DELETE', one, `/api/v1/domains/${domain.id}`, auth);

  const email = `sender.${randomUUID().slice(0, 8)}@example.com`;
  const sender = (await check('POST', '/api/v1/senders', '/api/v1/senders', { ...auth, body: { email } })).json.data;
  await check('POST', '/api/v1/senders', '/api/v1/senders', { ...auth, body: { email } });
  await check('GET', '/api/v1/senders', '/api/v1/senders?limit=5', auth);
  await check('GET', '/api/v1/senders', '/api/v1/senders?limit=0', auth);
  const senderPath = '/api/v1/senders/{senderId}';
  await check('GET', senderPath, `/api/v1/senders/${sender.id}`, auth);
  await check('GET', senderPath, '/api/v1/senders/snd_unknown', auth);
  const resend = '/api/v1/senders/{senderId}/resend';
  await check('POST', resend, `/api/v1/senders/${sender.id}/resend`, auth);
  await check('POST', resend, '/api/v1/senders/snd_unknown/resend', auth);
  // The second mail's link is the live one (resend replaced the first).
  const token = await confirmationToken(inboxUrl, email, 2);
  await check('GET', '/confirm-sender', `/confirm-sender?token=${token}`);
  await check('GET', '/confirm-sender', '/confirm-sender?token=unknown');
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
  await check('POST', '/confirm-sender', '/confirm-sender', { headers: form, raw: `token=${token}` });
  await check('POST', '/confirm-sender', '/confirm-sender', { headers: form, raw: `token=${token}` });
  await check('POST', '/confirm-sender', '/confirm-sender', { headers: form, raw: `token=${'x'.repeat(5000)}` });
  await check('DELETE', senderPath, `/api/v1/senders/${sender.id}`, auth);
  await check('DELETE', senderPath, `/api/v1/senders/${sender.id}`, auth);
}
