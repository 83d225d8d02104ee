// An instant OTP code through the only relay while it refuses connections: the send answers `sent: false`,
// the queue's retries (run here as the queue runs them: each after the delay the consumer asks for, retry
// base 1 s, at most 5 retries) fail until the route's breaker is open, the relay comes back, and the next
// retry probes the route instead of waiting for the breaker: the code arrives and verifies.
import { env } from 'cloudflare:workers';
import { afterEach, expect, it } from 'vitest';
import { config } from '../../src/config';
import { breakerState, resetBreakers } from '../../src/mail/routes/breaker';
import { routeKey } from '../../src/mail/routes/send';
import type { MailJob } from '../../src/queue/jobs';
import { call, inbox, newAccount, uniqueAddress } from '../support/api';
import { runJobs } from '../support/delivery';
import { INSTANT, verify } from '../support/public-otp';
import { newRelay, setRelayMode } from '../support/relays';
import type { OtpSent } from '../support/responses';

/** How long after the relay is back the code is waited for: about twice the retry that finds it back. */
const WAIT_AFTER_BACK_MS = 20_000;

afterEach(() => resetBreakers());

it('the relay back after an outage that opened its breaker: the next retry probes it and the code arrives', async () => {
  const port = await newRelay('refused');
  const jobs: MailJob[] = [];
  const queue = {
    async send(job: MailJob) {
      jobs.push(job);
    },
  } as unknown as Queue;
  const route = { name: 'relay', kind: 'smtp', host: '127.0.0.1', port: Number(port), secure: 'none' };
  const bindings = { ...env, MAIL_ROUTES: JSON.stringify([route]), MAIL_RETRY_BASE_SECONDS: '1', MAIL_QUEUE: queue };
  const key = routeKey(config(bindings).routes[0]!);
  const { publicToken } = await newAccount();
  const email = uniqueAddress('outage');
  const sent = await call<OtpSent>('POST', INSTANT.send, { token: publicToken, body: { email }, bindings });
  expect(sent.json.data.sent).toBe(false);
  expect(jobs).toMatchObject([{ kind: 'otp-retry', email }]);

  let backAt: number | null = null;
  for (let attempts = 1; attempts <= 6; attempts++) {
    const result = await runJobs(jobs, attempts, 'postcode-mail', bindings);
    if (result.retryMessages.length === 0) break;
    if (backAt === null && breakerState(key) === 'open') {
      await setRelayMode(port, 'ok');
      backAt = Date.now();
    }
    const delayMs = Object.values(result.delays)[0]! * 1000;
    if (backAt !== null && Date.now() + delayMs - backAt > WAIT_AFTER_BACK_MS) break;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  expect(backAt, 'the outage opened the breaker').not.toBeNull();
  const [mail] = await inbox(email, env.FLAKY_INBOX_URL);
  expect(mail, 'the code arrived after the relay came back').toBeDefined();
  const code = mail!.text.match(/^\s*(\d{6})\s*$/m)![1];
  const verified = await verify(publicToken, { sessionId: sent.json.data.sessionId, email, code });
  expect(verified.json).toEqual({ success: true, data: { verified: true } });
}, 60_000);
