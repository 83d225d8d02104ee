// One email's page: recipients, timeline, route, headers and body (in a sandboxed frame); a scheduled email
// can be called off or moved there.
import type { Context } from 'hono';
import { z } from 'zod';
import { can } from '../../dashboard/roles';
import { bounceWords } from '../../dashboard/views/bounce';
import { Csrf, Id, Notice, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import { ApiError } from '../../errors';
import { cancelEmail, moveEmail } from '../../mail/scheduled';
import { emailDetail } from '../../mail/send-log';
import { scheduledAt } from '../../schemas/sending';
import type { EmailOwner } from '../../store/account/schedule';
import { modeQuery, ownerOf, StatusBadge } from './emails';
import { act, formFields, type PageDeclaration, type PageEnv, render } from './page';

const DONE: Record<string, string> = { canceled: 'The email is canceled.', moved: 'The email is moved.' };

/** A `datetime-local` value read as UTC, for the API's own `scheduledAt` rule. */
const moveForm = z.object({
  mode: z.string().optional(),
  scheduledAt: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/, 'expected a date and time')
    .transform((local) => `${local}:00.000Z`)
    .pipe(scheduledAt),
});
const modeForm = z.object({ mode: z.string().optional() });
/** Timeline entries whose detail is the time the email is due. */
const TIMED_EVENTS = new Set(['scheduled', 'rescheduled']);

/** `label: value` pairs of an email's fields, leaving out the empty ones. */
export function Fields(props: { fields: [string, unknown][] }) {
  return (
    <dl class="fields">
      {props.fields
        .filter(([, value]) => value !== null && value !== undefined && value !== '')
        .map(([label, value]) => (
          <>
            <dt>{label}</dt>
            <dd>{value as string}</dd>
          </>
        ))}
    </dl>
  );
}

async function detailPage(c: Context<PageEnv>, owner: EmailOwner, notice?: unknown) {
  const emailId = c.req.param('emailId') ?? '';
  const { email, recipients, events, replies, body } = await emailDetail(c.env, owner, emailId);
  const done = DONE[c.req.query('done') ?? ''];
  const writable = email.status === 'SCHEDULED' && can(c.var.signedIn.role, 'write');
  const base = `/dashboard/emails/${email.id}`;
  const { csrf } = c.var.frame;
  return render(
    c,
    email.subject || 'Email',
    <>
      <p>
        <a href={`/dashboard/emails${modeQuery(owner)}`}>← Emails</a>
      </p>
      <h1>{email.subject || '(no subject)'}</h1>
      {notice ?? (done ? <Notice tone="ok">{done}</Notice> : null)}
      <Fields
        fields={[
          ['Status', <StatusBadge status={email.status} />],
          ['Id', <Id value={email.id} />],
          ['From', email.fromName ? `${email.fromName} <${email.fromEmail}>` : email.fromEmail],
          ['To', email.toAddresses.join(', ')],
          ['Cc', email.ccAddresses.join(', ')],
          ['Bcc', email.bccAddresses.join(', ')],
          ['Reply-To', email.replyTo.join(', ')],
          ['Message-ID', <Id value={email.messageId} />],
          ['Created', <When iso={email.createdAt} />],
          ['Scheduled for', email.scheduledAt ? <When iso={email.scheduledAt} /> : null],
          ['Sent', email.sentAt ? <When iso={email.sentAt} /> : null],
          ['Attempts', String(email.attempts)],
          ['Tags', email.tags.map((t) => `${t.name}:${t.value}`).join(', ')],
          ['Test mail', email.test ? 'yes (never sent)' : null],
        ]}
      />
      {writable ? (
        <section class="panel" aria-labelledby="schedule">
          <h2 id="schedule">Scheduled</h2>
          <div class="actions">
            <form class="inline" method="post" action={`${base}/move`}>
              <Csrf token={csrf} />
              <input type="hidden" name="mode" value={owner.test ? 'test' : 'live'} />
              <label>
                Send at (UTC)
                <input type="datetime-local" name="scheduledAt" required />
              </label>
              <button type="submit" class="secondary">
                Move
              </button>
            </form>
            <form class="inline" method="post" action={`${base}/cancel`}>
              <Csrf token={csrf} />
              <input type="hidden" name="mode" value={owner.test ? 'test' : 'live'} />
              <button type="submit" class="danger">
                Cancel the email
              </button>
            </form>
          </div>
        </section>
      ) : null}
      <h2>Recipients</h2>
      <Table
        columns={['Address', 'Kind', 'Status', 'Route', 'Server reply']}
        rows={recipients.map((r) => [
          r.email,
          r.kind,
          <>
            <StatusBadge status={r.status} />
            {r.bounceType ? ` (${bounceWords(r.bounceType, r.bounceReason)})` : ''}
          </>,
          r.route ?? '—',
          r.reply ?? '',
        ])}
      />
      <h2>Timeline</h2>
      <Table
        columns={['When', 'What', 'Route', 'Detail']}
        rows={events.map((e) => [
          <When iso={e.at} seconds />,
          e.type,
          e.route ?? '',
          TIMED_EVENTS.has(e.type) && e.detail ? <When iso={e.detail} /> : (e.detail ?? ''),
        ])}
      />
      {replies.length > 0 ? (
        <>
          <h2>Replies</h2>
          <Table
            columns={['Received', 'From', 'Subject']}
            rows={replies.map((r) => [
              <When iso={new Date(r.receivedAt).toISOString()} />,
              r.from ? r.from.address : '',
              <a href={`/dashboard/inbound/${r.inboundId}`}>
                {r.subject || '(no subject)'}
                {r.autoReply ? ' (auto-reply)' : r.deliveryReport ? ' (delivery report)' : ''}
              </a>,
            ])}
          />
        </>
      ) : null}
      {Object.keys(email.headers).length > 0 ? (
        <>
          <h2>Headers</h2>
          <Fields fields={Object.entries(email.headers)} />
        </>
      ) : null}
      {email.attachments.length > 0 ? (
        <>
          <h2>Attachments</h2>
          <Table
            columns={['File', 'Type', 'Bytes']}
            rows={email.attachments.map((a) => [a.filename, a.contentType, String(a.size)])}
          />
        </>
      ) : null}
      <h2>Body</h2>
      {body?.html ? (
        <iframe
          tabindex={-1}
          class="preview"
          title="The HTML body"
          sandbox=""
          src={`${base}/html${modeQuery(owner)}`}
          referrerpolicy="no-referrer"
        />
      ) : null}
      {body?.text ? <pre class="text-body">{body.text}</pre> : null}
      {!body?.html && !body?.text ? (
        <p class="muted">The body is gone (deleted with the email's attachments).</p>
      ) : null}
    </>,
  );
}

/**
 * An HTML body on its own: framed by the email's page, in a sandbox, with a policy that runs no script and loads
 * nothing but images.
 */
async function htmlBody(c: Context<PageEnv>) {
  const owner = ownerOf(c, c.req.query('mode'));
  const { body } = await emailDetail(c.env, owner, c.req.param('emailId') ?? '');
  if (!body?.html) throw new ApiError('EMAIL_NOT_FOUND', 'This email has no HTML body');
  return c.html(body.html, 200, PREVIEW_HEADERS);
}

/** What a framed preview of mail HTML is sent with (also the templates' preview). */
export const PREVIEW_HEADERS = {
  'Content-Security-Policy':
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'self'",
  'X-Frame-Options': 'SAMEORIGIN',
  'Referrer-Policy': 'no-referrer',
};

export const emailDetailPages: PageDeclaration[] = [
  {
    method: 'get',
    path: '/dashboard/emails/:emailId',
    access: 'read',
    handler: (c) => detailPage(c, ownerOf(c, c.req.query('mode'))),
  },
  { method: 'get', path: '/dashboard/emails/:emailId/html', access: 'read', handler: htmlBody },
  {
    method: 'post',
    path: '/dashboard/emails/:emailId/cancel',
    access: 'write',
    handler: (c) => {
      const owner = ownerOf(c, formFields(c, modeForm).mode);
      return act(
        c,
        () => cancelEmail(c.env, owner, c.req.param('emailId') ?? ''),
        `/dashboard/emails/${c.req.param('emailId')}?${owner.test ? 'mode=test&' : ''}done=canceled`,
        (notice) => detailPage(c, owner, notice),
        { action: 'email.canceled', target: c.req.param('emailId') },
      );
    },
  },
  {
    method: 'post',
    path: '/dashboard/emails/:emailId/move',
    access: 'write',
    handler: (c) => {
      const owner = ownerOf(c, formFields(c, modeForm).mode);
      const emailId = c.req.param('emailId') ?? '';
      let scheduledAt = '';
      return act(
        c,
        () => {
          scheduledAt = formFields(c, moveForm).scheduledAt;
          return moveEmail(c.env, owner, emailId, scheduledAt);
        },
        `/dashboard/emails/${emailId}?${owner.test ? 'mode=test&' : ''}done=moved`,
        (notice) => detailPage(c, owner, notice),
        () => ({ action: 'email.moved', target: emailId, detail: { scheduledAt } }),
      );
    },
  },
];
