// Real mail that machines wrote (sisimai's set-of-emails: 590 bounces, feedback reports, delivery notices and
// auto-replies of real servers, test/corpus/sisimai) handed to a receiving address whose route sends
// `email.received`: each is kept, flagged, and sent as no event, but for the few named below. The corpus's two
// real messages from people, and a bounce a person forwarded, are sent. Each sample arrives with the envelope
// sender its Return-Path records (the null sender of a bounce), else its From.
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import worker from '../../src/index';
import { accountStore } from '../../src/store/account/client';
import type { InboundMessage } from '../../src/store/account/inbound-messages';
import { call, newAccount } from '../support/api';
import { inLanes, SAMPLES } from '../support/corpus';
import { inboundMessage } from '../support/reports';
import { newWebhook, receivedAt, waitForEvents } from '../support/webhooks';

/** Machines' mail that carries none of the marks: notifications rather than reports, or a subject alone. */
const UNMARKED = new Set([
  // Amazon SNS notifications (a JSON body from no-reply@sns.amazonaws.com): a service's mail, not a report.
  'lhost-amazonses-09.eml',
  'lhost-amazonses-10.eml',
  'lhost-amazonses-11.eml',
  'lhost-amazonses-12.eml',
  'lhost-amazonses-13.eml',
  // A mailing list's own notices (fml), from its -admin address.
  'lhost-fml-02.eml',
  'lhost-fml-03.eml',
  // KDDI's error notice from a no-reply address, no status part.
  'lhost-kddi-01.eml',
  // An auto-reply that says so only in its subject ("Auto reply: …"): a subject alone is no proof.
  'rfc3834-03.eml',
]);
/** People's mail: a bounce a person forwards ("Fwd: Returned mail"), and the corpus's two messages that are not bounces. */
const PEOPLE = new Set(['lhost-sendmail-14.eml', 'is-not-bounce-01.eml', 'is-not-bounce-02.eml']);
const NOT_BOUNCES = ['is-not-bounce-01.eml', 'is-not-bounce-02.eml'];

/** The envelope sender a hop recorded in Return-Path (`<>`: the null sender), else the From address. */
function envelopeSenderOf(raw: Uint8Array): string {
  const head = new TextDecoder('latin1').decode(raw.subarray(0, 64 * 1024)).split(/\r?\n\r?\n/)[0]!;
  const returnPath = /^return-path:[ \t]*<([^>]*)>/im.exec(head);
  if (returnPath) return returnPath[1]!;
  return /^from:.*?<?([^\s<>"]+@[^\s<>"]+)>?\s*$/im.exec(head)?.[1] ?? '';
}

async function allMessages(accountId: string): Promise<InboundMessage[]> {
  const store = accountStore(env, accountId);
  const messages: InboundMessage[] = [];
  for (let page = 1; ; page++) {
    const found = await store.listInbound(accountId, {}, { limit: 100, page, after: null });
    messages.push(...found.items);
    if (found.items.length < 100) return messages;
  }
}

it('real servers’ bounces, reports and auto-replies are flagged and never sent as email.received', async () => {
  const account = await newAccount(`Inbound corpus ${crypto.randomUUID().slice(0, 8)}`);
  const addresses = await call<{ domains: { domain: string }[] }>('GET', '/api/v1/inbound/addresses', {
    token: account.mailKey,
  });
  const domain = addresses.json.data.domains[0]!.domain;
  const route = await call('POST', '/api/v1/inbound/routes', {
    token: account.mailKey,
    body: { pattern: `*@${domain}`, action: 'webhook' },
  });
  expect(route.status).toBe(201);
  const { key } = await newWebhook(account.mailKey, ['email.received']);
  const files = [
    ...Object.keys(SAMPLES).map((file) => ({ file, url: `${env.FILE_SERVER_URL}/corpus/${file}` })),
    ...NOT_BOUNCES.map((file) => ({ file, url: `${env.FILE_SERVER_URL}/corpus-not/${file}` })),
  ];
  // The per-account rate would refuse most of a corpus handed over at once.
  const bindings = { ...env, INBOUND_RATE_PER_ACCOUNT: '0' };
  const refused = await inLanes(files, async ({ file, url }, index) => {
    const raw = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const fixture = { from: envelopeSenderOf(raw), to: `sample-${index}@${domain}`, raw: '' };
    const { message, state } = inboundMessage(fixture, raw);
    // A null sender stays null (inboundMessage's default stands for a sender the fixture leaves out).
    Object.assign(message, { from: fixture.from });
    await worker.email(message, bindings);
    return state.rejected ? `${file}: ${state.rejected}` : null;
  });
  expect(refused.filter(Boolean)).toEqual([]);

  const byAddress = new Map((await allMessages(account.accountId)).map((m) => [m.envelopeTo, m]));
  const unflagged = files
    .filter((_, index) => {
      const m = byAddress.get(`sample-${index}@${domain}`)!;
      return !m.autoReply && !m.deliveryReport;
    })
    .map((f) => f.file);
  const machines = files.length - PEOPLE.size;
  const flagged = machines - unflagged.filter((file) => !PEOPLE.has(file)).length;
  console.info(`inbound corpus: ${flagged} of ${machines} machines' messages flagged; people's: ${PEOPLE.size}`);
  expect(byAddress.size).toBe(files.length);
  expect(unflagged.sort()).toEqual([...UNMARKED, ...PEOPLE].sort());

  // Exactly the unflagged ones are sent as email.received.
  await waitForEvents(key, ['email.received'], 60_000);
  await expect
    .poll(async () => (await receivedAt(key)).length, { timeout: 60_000, interval: 500 })
    .toBe(unflagged.length);
  const sentTo = (await receivedAt(key)).map((r) => String(r.payload.data.to));
  const expectedTo = files.flatMap((f, index) => (unflagged.includes(f.file) ? [`sample-${index}@${domain}`] : []));
  expect(sentTo.sort()).toEqual(expectedTo.sort());
}, 240_000);
