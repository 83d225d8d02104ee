// The operations `npm run bench:scale` times at each size, each as single requests one after another. Along
// the emails of the large account: the send log (pages, each filter, a combination), one email whole, the
// templates and suppressions lists, queueing an email (now and a day ahead), an OTP verify and a run of the scheduled handler; the
// send log's first page is timed for a small account too. Along the number of accounts: the operator's account
// list, and a small account's send log and queueing.
import { json, waitForQuiet } from './delivery.mjs';
import { bodyMaker } from './seed-content.mjs';

const dayAhead = () => new Date(Date.now() + 86_400_000).toISOString();
const get = (token, path) => ({ path, headers: { Authorization: `Bearer ${token}` } });

/** A queued email with the bench's 30 KB html and 3 KB text body, to a new address each time. */
function queueRequest(key, bodies, n, fields = {}) {
  const subject = `Your receipt #${n}`;
  return {
    path: '/api/v1/emails',
    method: 'POST',
    headers: json(key),
    body: JSON.stringify({
      to: `q${n}@bench.test`,
      subject,
      html: bodies.html(subject, 'q'),
      text: bodies.text(subject, 'q'),
      ...fields,
    }),
  };
}

/**
 * Sessions of the backend OTP flow for the verify rounds: sent 10 at a time (not timed), their codes read
 * from the SMTP sink once it has them all.
 */
async function otpSessions(baseUrl, ready, sink, count, round) {
  const sessions = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${baseUrl}/api/v1/backend-otp/send`, {
        method: 'POST',
        headers: json(ready.serverOtpKey),
        body: JSON.stringify({ email: `v${round}-${i}@bench.test` }),
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`backend-otp send: ${res.status} ${JSON.stringify(body)}`);
      sessions.push({ sessionId: body.data.sessionId, email: body.data.email });
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  await waitForQuiet(sink);
  const codes = await sink.otpCodes();
  const verifiable = sessions.filter((s) => codes[s.sessionId]);
  if (verifiable.length < count) throw new Error(`only ${verifiable.length} of ${count} OTP codes reached the sink`);
  return verifiable.map((s) => ({ ...s, code: codes[s.sessionId] }));
}

/**
 * The operations, in the order they are timed: reads, then the scheduled handler, then the writes (whose
 * deliveries and alarms are waited out after them). `sample` holds final live emails of the large account
 * ({ id, canonical }) for the detail and the `to` filter; each request takes the next one.
 * An operation is { name, request(i), prepare?(count, attempt), settle?() }.
 */
export function scaleOperations({ baseUrl, ready, smallKey, sample, sink }) {
  const key = ready.mailKey;
  const log = (query) => get(key, `/api/v1/emails${query}`);
  const nth = (i) => sample[i % sample.length];
  const bodies = bodyMaker(99);
  let queued = 0;
  let sessions = [];
  return [
    { name: 'log-page-1', request: () => log('?page=1') },
    { name: 'log-page-1-small-account', request: () => get(smallKey, '/api/v1/emails?page=1') },
    { name: 'log-page-50', request: () => log('?page=50') },
    { name: 'log-status', request: () => log('?status=FAILED') },
    { name: 'log-to', request: (i) => log(`?to=${encodeURIComponent(nth(i).canonical)}`) },
    { name: 'log-tag', request: () => log('?tag=category:password-reset') },
    { name: 'log-status-tag', request: () => log('?status=FAILED&tag=category:receipt') },
    {
      name: 'detail',
      request: (i) => get(key, `/api/v1/emails/${nth(i).id}`),
      // The detail reads the body from R2 (scripts/bench/seed-bodies.mjs): a miss would be timed as a hit.
      prepare: async () => {
        const { headers } = get(key, '');
        const res = await fetch(`${baseUrl}/api/v1/emails/${nth(0).id}`, { headers });
        const body = await res.json();
        if (!body.data?.html) throw new Error(`the detail of ${nth(0).id} has no body: ${res.status}`);
      },
    },
    { name: 'templates', request: () => get(key, '/api/v1/templates') },
    { name: 'suppressions', request: () => get(key, '/api/v1/suppressions') },
    // The handler of every minute in production; `npm start` calls it the same way.
    { name: 'scheduled', request: () => ({ path: '/__scheduled?cron=*+*+*+*+*' }) },
    {
      name: 'queue',
      request: () => queueRequest(key, bodies, queued++),
      settle: () => waitForQuiet(sink),
    },
    // The same accept with nothing sent after its answer (a day ahead): what of queue's time is its own, and
    // what is the delivery and webhooks the previous requests left on the one workerd thread.
    { name: 'queue-later', request: () => queueRequest(key, bodies, queued++, { scheduledAt: dayAhead() }) },
    {
      name: 'otp-verify',
      prepare: async (count, attempt) => {
        sessions = await otpSessions(baseUrl, ready, sink, count, `${Date.now()}-${attempt}`);
      },
      request: (i) => ({
        path: '/api/v1/backend-otp/verify',
        method: 'POST',
        headers: json(ready.serverOtpKey),
        body: JSON.stringify(sessions[i]),
      }),
    },
  ];
}

/** The operations along the number of accounts: what one more account must not make slower. */
export function accountOperations({ ready, smallKey, sink }) {
  const bodies = bodyMaker(98);
  let queued = 0;
  return [
    { name: 'accounts-list', request: () => get(ready.adminToken, '/admin/v1/accounts') },
    { name: 'small-log-page-1', request: () => get(smallKey, '/api/v1/emails?page=1') },
    {
      name: 'small-queue',
      request: () => queueRequest(smallKey, bodies, 1_000_000 + queued++),
      settle: () => waitForQuiet(sink),
    },
  ];
}
