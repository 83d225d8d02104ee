import { anyApiKey } from '../auth/guards';
import { periodOf, readMetrics } from '../metrics';
import { metricsQuery, metricsResponse } from '../schemas/metrics';
import { json, ok, route, router } from './route';

const COUNTS = {
  queued: 120,
  sent: 118,
  delivered: 110,
  bounced: 3,
  bouncedSenderProblem: 1,
  complained: 1,
  failed: 2,
  suppressed: 0,
};
const FUNNEL = {
  sent: 40,
  verified: 34,
  locked: 1,
  expired: 5,
  conversionRate: 0.85,
  medianSecondsToVerify: 30,
  refused: { challenge_failed: 12, recipient_capped: 3, domain_capped: 0, address_not_allowed: 2 },
};
const NONE = {
  sent: 0,
  verified: 0,
  locked: 0,
  expired: 0,
  conversionRate: null,
  medianSecondsToVerify: null,
  refused: { challenge_failed: 0, recipient_capped: 0, domain_capped: 0, address_not_allowed: 0 },
};

const metrics = route({
  method: 'get',
  path: '/api/v1/metrics',
  tag: 'Mail',
  summary: 'Sending and OTP metrics over a period',
  description:
    "Counts of the key's mode (a test key sees test mail, and no codes) per UTC day or hour, from counters kept with the facts: the cost does not grow with the number of emails. Email figures count recipients; OTP figures count sessions in the hour they were sent, once they have ended (verified or locked at once, expired a day after they expire), and refused sends in the hour they were refused.",
  guard: anyApiKey,
  limit: { bucket: 'read' },
  query: metricsQuery,
  success: {
    status: 200,
    content: json(metricsResponse, {
      success: true,
      data: {
        from: '2026-11-25T00:00:00.000Z',
        to: '2026-11-26T00:00:00.000Z',
        granularity: 'day',
        emails: {
          totals: COUNTS,
          rates: { delivered: 0.9322, bounced: 0.0254, complained: 0.0085 },
          series: [{ start: '2026-11-25T00:00:00.000Z', ...COUNTS }],
        },
        otp: { instant: FUNNEL, backend: NONE, email_verification: NONE },
      },
    }),
  },
});

export const metricsRoutes = router().openapi(metrics, async (c) => {
  const { credential } = c.var;
  const period = periodOf(c.req.valid('query'));
  return ok(c, await readMetrics(c.env, credential.accountId, credential.mode === 'test', period));
});
