// One seeded email and everything the app keeps of it, as the delivery path leaves them
// (src/store/account/email-store.ts and delivery.ts): its row, recipients with their outcomes, timeline, tags, the webhook deliveries
// of its events, the bounces it added to the suppression list, and now and then an OTP verification of the
// same customer. Plain values in the column order of seed-objects.mjs's statements; times in epoch milliseconds
// where the app keeps them so (src/store/account/schema-v1.ts), ISO text elsewhere.
import { category, customerAddress } from './seed-content.mjs';

const DAY_MS = 86_400_000;
/** Seeded mail spans the last 27 days: within a 30-day retention, so no size shrinks while it is measured. */
const SPAN_MS = 27 * DAY_MS;
const OTP_PER_EMAIL = 0.3;
const BOUNCE = '550 5.1.1 Recipient address rejected: User unknown';
const DEFERRAL = '451 4.7.1 Try again later';

const iso = (ms) => new Date(ms).toISOString();

/** A status as a transactional sender's log has them: nearly all sent, some bounced, a few suppressed or canceled. */
function outcomeOf(random) {
  const roll = random.next();
  if (roll < 0.002) return 'SCHEDULED';
  if (roll < 0.007) return 'CANCELED';
  if (roll < 0.017) return 'SUPPRESSED';
  if (roll < 0.042) return 'FAILED';
  return 'SENT';
}

/**
 * A webhook delivery of an event (nearly all delivered at the first attempt), for an account with an endpoint:
 * settled, so due no more.
 */
function deliveryOf(random, type, data, atMs) {
  const failed = random.next() < 0.01;
  return [
    `msg_${random.hex(26)}`,
    type,
    JSON.stringify(data),
    failed ? 'failed' : 'delivered',
    failed ? 10 : 1,
    failed ? 500 : 200,
  ].concat([failed ? 'HTTP 500' : null, null, atMs, atMs + 400]);
}

/**
 * Email number `n` of `account` ({ id, index, sender, templates, endpoint }) among its `customers`; `now`
 * anchors the timestamps.
 */
export function emailOf(random, account, { n, now, customers }) {
  const created = now - 3_600_000 - random.int(SPAN_MS);
  // The account's tag, then 60 random bits (src/ids.ts newEmailId).
  const id = `em_${account.id.slice(4, 12)}${random.base32(12)}`;
  const kind = category(random);
  const customer = customerAddress(account.index, random.int(customers));
  const domain = account.sender.email.split('@')[1];
  const subject = kind.subject(100_000 + n);
  const status = outcomeOf(random);
  const test = random.next() < 0.02 ? 1 : 0;
  const deferred = status === 'SENT' && random.next() < 0.03;
  const done = created + (deferred ? 10_000 : 300) + random.int(2_000);
  const final = status !== 'SCHEDULED' && status !== 'CANCELED';
  let scheduledAt = null;
  if (status === 'SCHEDULED') scheduledAt = now + DAY_MS + random.int(6 * DAY_MS);
  if (status === 'CANCELED') scheduledAt = created + DAY_MS;

  // 1-3 recipients: a cc of another customer now and then, a bcc to the sender's archive.
  const list = [{ ...customer, kind: 'to' }];
  const extra = random.next();
  // Another customer: an address is one recipient of an email at most (src/mail/compose.ts).
  const other = customerAddress(account.index, random.int(customers));
  if (extra < 0.2 && other.canonical !== customer.canonical) list.push({ ...other, kind: 'cc' });
  if (extra < 0.05 || (extra > 0.9 && extra < 0.98)) {
    list.push({ address: `archive@${domain}`, canonical: `archive@${domain}`, kind: 'bcc' });
  }
  // A failed email bounced for every recipient; a sent one with several loses one now and then.
  const bounced = list.map((_, i) => status === 'FAILED' || (status === 'SENT' && i > 0 && random.next() < 0.1));
  const recipientStatus = (i) => (bounced[i] ? 'FAILED' : status === 'SCHEDULED' ? 'QUEUED' : status);
  const recipients = list.map((r, i) => [
    i,
    r.address,
    r.canonical,
    r.kind,
    recipientStatus(i),
    bounced[i] ? BOUNCE : null,
  ]);

  const tags = [];
  if (random.next() < 0.7) tags.push({ name: 'category', value: kind.value });
  if (random.next() < 0.3) tags.push({ name: 'locale', value: random.pick(['en', 'de', 'fr', 'es']) });
  const row = [
    id,
    account.id,
    random.next() < 0.5 ? random.pick(account.templates) : null,
    account.sender.id,
    account.sender.email,
    subject,
    kind.value === 'password-reset' || kind.value === 'sign-in' ? 'URGENT' : 'NORMAL',
    status,
    !final || status === 'SUPPRESSED' ? 0 : deferred ? 2 : 1,
    bounced.some(Boolean) ? BOUNCE : deferred ? DEFERRAL : null,
    created,
    final ? done : created,
    status === 'SENT' ? done : null,
    status === 'SCHEDULED' ? scheduledAt : null,
    scheduledAt,
    random.next() < 0.3 ? JSON.stringify([`support@${domain}`]) : '[]',
    random.next() < 0.2 ? JSON.stringify({ 'X-Entity-Ref-ID': `order-${n}` }) : '{}',
    JSON.stringify(tags),
    test,
  ];

  const events = [[scheduledAt ? 'scheduled' : 'queued', created, scheduledAt && iso(scheduledAt)]];
  if (status === 'CANCELED') events.push(['canceled', created + 600_000, null]);
  if (deferred) events.push(['deferred', created + 1_000, DEFERRAL]);
  const sent = list.filter((_, i) => !bounced[i]).map((r) => r.address);
  if (status === 'SENT') events.push(['sent', done, sent.join(', ')]);
  const deliveries = [];
  const suppressions = [];
  const toAddresses = list.filter((r) => r.kind === 'to').map((r) => r.address);
  list.forEach((r, i) => {
    if (bounced[i]) events.push(['failed', done, `${r.address}: ${BOUNCE}`]);
    if (status === 'SUPPRESSED') events.push(['suppressed', done, r.address]);
    if (!final) return;
    const type = bounced[i] ? 'email.failed' : status === 'SUPPRESSED' ? 'email.suppressed' : 'email.sent';
    const data = { emailId: id, to: toAddresses, subject, status, tags, test: test === 1, recipient: r.address };
    if (account.endpoint)
      deliveries.push(deliveryOf(random, type, bounced[i] ? { ...data, reply: BOUNCE } : data, done));
    if (bounced[i]) suppressions.push([r.canonical, 'rcpt_rejected', BOUNCE, id, 'bounce', iso(done)]);
    if (status === 'SUPPRESSED') {
      suppressions.push([r.canonical, 'rcpt_rejected', BOUNCE, null, 'bounce', iso(created - DAY_MS)]);
    }
  });
  if (random.next() < 0.002) {
    const other = customerAddress(account.index, random.int(customers));
    suppressions.push([other.canonical, 'manual', 'asked to stop', null, 'manual', iso(created)]);
  }
  let otp = null;
  if (random.next() < OTP_PER_EMAIL) {
    const sessionId = random.sessionId();
    const channel = random.next() < 0.7 ? 'backend' : 'instant';
    otp = [random.id('ver'), channel, sessionId, customer.canonical, created, created + 25_000];
    const data = { sessionId, email: customer.canonical, channel };
    if (account.endpoint) deliveries.push(deliveryOf(random, 'otp.verified', data, created + 25_000));
  }
  return {
    id,
    row,
    status,
    /** What tags repeat of their email: account, mode, time. */
    owner: [account.id, test, created],
    recipients,
    events,
    tags: tags.map((t) => [t.name, t.value]),
    deliveries,
    suppressions,
    otp,
    /** A final live email: one the bench may ask for (detail, `to`). */
    sample: final && test === 0 ? customer.canonical : null,
  };
}
