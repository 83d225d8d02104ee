// Overview: the last 7 or 30 days of mail per day, its rates, and how each OTP flavour's codes converted; the
// figures of GET /api/v1/metrics.
import type { Context } from 'hono';
import { Legend, LineChart, type Series } from '../../dashboard/views/chart';
import { Table } from '../../dashboard/views/table';
import { EMAIL_METRICS, type Metrics, OTP_CHANNELS, readMetrics } from '../../metrics';
import { OTP_REFUSAL_REASONS, type OtpRefusalReason } from '../../store/account/otp-outcomes';
import type { PageDeclaration, PageEnv } from './page';
import { render } from './page';

const PERIODS = [7, 30] as const;
const CHARTED = ['sent', 'delivered', 'bounced', 'complained', 'failed'] as const;
const LABEL: Record<(typeof EMAIL_METRICS)[number], string> = {
  queued: 'Queued',
  sent: 'Sent',
  delivered: 'Delivered',
  bounced: 'Bounced',
  bouncedSenderProblem: 'Sender-side',
  complained: 'Complained',
  failed: 'Failed',
  suppressed: 'Suppressed',
};
const FLAVOUR = { instant: 'Instant OTP', backend: 'Backend OTP', email_verification: 'Email verification' } as const;
/** The refusal reasons' column headings. */
const REFUSED: Record<OtpRefusalReason, string> = {
  challenge_failed: 'Bot check failed',
  recipient_capped: 'Recipient capped',
  domain_capped: 'Domain capped',
  address_not_allowed: 'Address refused',
};

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);

function Tabs(props: { days: number; test: boolean }) {
  const link = (days: number, test: boolean) => `/dashboard/overview?days=${days}${test ? '&mode=test' : ''}`;
  return (
    <nav class="tabs" aria-label="Period and mode">
      {PERIODS.map((days) => (
        <a href={link(days, props.test)} aria-current={days === props.days ? 'page' : undefined}>
          Last {days} days
        </a>
      ))}
      <a href={link(props.days, !props.test)}>{props.test ? 'Show live mail' : 'Show test mail'}</a>
    </nav>
  );
}

function Stats(props: { metrics: Metrics }) {
  const { totals, rates } = props.metrics.emails;
  const stats = [
    { label: 'Queued', value: String(totals.queued) },
    { label: 'Sent', value: String(totals.sent) },
    { label: 'Delivered', value: percent(rates.delivered), note: `${totals.delivered} recipients` },
    { label: 'Bounced', value: percent(rates.bounced), note: `${totals.bounced} recipients` },
    { label: 'Sender-side', value: String(totals.bouncedSenderProblem), note: `of ${totals.bounced} bounced` },
    { label: 'Complained', value: percent(rates.complained), note: `${totals.complained} recipients` },
    { label: 'Failed', value: String(totals.failed) },
  ];
  return (
    <div class="cards-row">
      {stats.map((stat) => (
        <div class="stat">
          <span class="label">{stat.label}</span>
          <span class="value">{stat.value}</span>
          {stat.note ? <span class="label">{stat.note}</span> : null}
        </div>
      ))}
    </div>
  );
}

async function overviewPage(c: Context<PageEnv>) {
  const days = c.req.query('days') === '30' ? 30 : 7;
  const test = c.req.query('mode') === 'test';
  const to = new Date();
  const from = new Date(to.getTime() - (days - 1) * 86_400_000);
  const metrics = await readMetrics(c.env, c.var.signedIn.accountId, test, { from, to, granularity: 'day' });
  const labels = metrics.emails.series.map((bucket) => bucket.start.slice(5, 10));
  const series: Series[] = CHARTED.map((key) => ({
    key,
    label: LABEL[key],
    values: metrics.emails.series.map((bucket) => bucket[key]),
  }));
  return render(
    c,
    'Overview',
    <>
      <h1>Overview</h1>
      <Tabs days={days} test={test} />
      <p class="muted">
        {test ? 'Test mail' : 'Live mail'}, per UTC day, counted per recipient. Rates are shares of the recipients sent.
        Sender-side bounces are those for the sender's reputation, authentication or content (blocked, taken for spam,
        authentication failed, refused by policy): they suppress no address.
      </p>
      <Stats metrics={metrics} />
      <section class="panel" aria-labelledby="per-day">
        <h2 id="per-day">Mail per day</h2>
        <LineChart id="mail-chart" title={`Mail per day, last ${days} days`} labels={labels} series={series} />
        <Legend series={series} />
        <details>
          <summary>The numbers per day</summary>
          <Table
            columns={['Day', ...EMAIL_METRICS.map((metric) => LABEL[metric])]}
            rows={metrics.emails.series.map((bucket) => [
              bucket.start.slice(0, 10),
              ...EMAIL_METRICS.map((metric) => String(bucket[metric])),
            ])}
          />
        </details>
      </section>
      <section aria-labelledby="codes">
        <h2 id="codes">One-time codes</h2>
        <p class="muted">
          Sessions sent in the period that have ended: verified or locked at once, expired a day after they expire.
          Refused: sends and resends refused in the period, nothing mailed.
        </p>
        <Table
          columns={[
            'Flavour',
            'Sent',
            'Verified',
            'Locked',
            'Expired',
            'Conversion',
            'Median time to verify',
            ...OTP_REFUSAL_REASONS.map((reason) => `Refused: ${REFUSED[reason]}`),
          ]}
          rows={OTP_CHANNELS.map((channel) => {
            const funnel = metrics.otp[channel];
            return [
              FLAVOUR[channel],
              String(funnel.sent),
              String(funnel.verified),
              String(funnel.locked),
              String(funnel.expired),
              percent(funnel.conversionRate),
              funnel.medianSecondsToVerify === null ? '—' : `within ${funnel.medianSecondsToVerify} s`,
              ...OTP_REFUSAL_REASONS.map((reason) => String(funnel.refused[reason])),
            ];
          })}
        />
      </section>
    </>,
  );
}

export const overviewPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/overview', access: 'read', handler: (c) => overviewPage(c) },
];
