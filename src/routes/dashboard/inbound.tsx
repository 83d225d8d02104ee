// Received mail: the account's messages newest first with the API's filters, and one message's page (its fields,
// flags, thread, attachments to download, and its body: HTML in a sandboxed frame, text as it came).
import type { Context } from 'hono';
import { Id, When } from '../../dashboard/views/layout';
import { Pager, Table } from '../../dashboard/views/table';
import { attachmentOf, findMessage } from '../../inbound/messages';
import { pageRequest } from '../../schemas/common';
import { attachmentParams, inboundListQuery } from '../../schemas/inbound';
import { accountStore } from '../../store/account/client';
import type { InboundMessage } from '../../store/account/inbound-messages';
import { invalidInput } from '../../validation';
import type { MailboxData } from '../../webhooks/events';
import { Fields, PREVIEW_HEADERS } from './email';
import type { PageDeclaration, PageEnv } from './page';
import { render } from './page';

const PAGE_SIZE = 25;

const mailboxText = (m: MailboxData | null) => (m ? (m.name ? `${m.name} <${m.address}>` : m.address) : '');
const iso = (ms: number) => new Date(ms).toISOString();

/** What a message is besides mail a person wrote: the flags, in words. */
function flagsOf(m: Pick<InboundMessage, 'autoReply' | 'deliveryReport' | 'spoofed'>): string {
  return [
    m.autoReply ? 'auto-reply' : null,
    m.deliveryReport ? 'delivery report' : null,
    m.spoofed ? 'claims your domain, fails DMARC' : null,
  ]
    .filter(Boolean)
    .join(', ');
}

async function listPage(c: Context<PageEnv>) {
  const given = Object.entries(c.req.query()).filter(([, value]) => value !== '');
  const parsed = inboundListQuery.safeParse({ ...Object.fromEntries(given), limit: String(PAGE_SIZE) });
  if (!parsed.success) throw invalidInput(parsed.error);
  const { to, from, page: pageNumber, limit, after } = parsed.data;
  const { accountId } = c.var.signedIn;
  const request = pageRequest({ page: pageNumber, limit, after });
  const filters = { ...(to ? { to: to.toLowerCase() } : {}), ...(from ? { from: from.toLowerCase() } : {}) };
  const page = await accountStore(c.env, accountId).listInbound(accountId, filters, request);
  const query = new URLSearchParams(filters);
  return render(
    c,
    'Received mail',
    <>
      <h1>Received mail</h1>
      <form class="inline panel" method="get" action="/dashboard/inbound" aria-label="Filter received mail">
        <label>
          To
          <input type="email" name="to" value={to ?? ''} />
        </label>
        <label>
          From
          <input type="email" name="from" value={from ?? ''} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <p class="muted">
        {page.total} received{to || from ? ' match' : ''}, newest first. Which addresses take mail is up to the
        account's inbound routes (docs/inbound.md).
      </p>
      <Table
        columns={['Received', 'From', 'To', 'Subject', 'Flags']}
        rows={page.items.map((m) => [
          <When iso={iso(m.receivedAt)} />,
          mailboxText(m.from),
          m.envelopeTo,
          <a href={`/dashboard/inbound/${m.id}`}>{m.subject || '(no subject)'}</a>,
          flagsOf(m),
        ])}
        empty="No received mail."
      />
      <Pager path="/dashboard/inbound" query={query} first={request.page === 1} next={page.nextCursor} />
    </>,
  );
}

async function messagePage(c: Context<PageEnv>) {
  const m = await findMessage(c.env, c.var.signedIn.accountId, c.req.param('inboundId') ?? '');
  const base = `/dashboard/inbound/${m.id}`;
  const { spf, dkim, dmarc } = m.authentication;
  const fields: [string, unknown][] = [
    ['Id', <Id value={m.id} />],
    ['From', mailboxText(m.from)],
    ['To', m.envelopeTo],
    ['Cc', m.cc.map(mailboxText).join(', ')],
    ['Reply-To', m.replyTo.map(mailboxText).join(', ')],
    ['Received', <When iso={iso(m.receivedAt)} />],
    ['Message-ID', m.messageId],
    [
      'In reply to',
      m.emailId ? (
        <a href={`/dashboard/emails/${m.emailId}`}>
          <Id value={m.emailId} />
        </a>
      ) : null,
    ],
    ['Route action', m.action],
    ['Authentication', `SPF ${spf}, DKIM ${dkim}, DMARC ${dmarc}`],
    ['Flags', flagsOf(m)],
    ['Size', `${m.size} bytes`],
  ];
  return render(
    c,
    m.subject || 'Received mail',
    <>
      <p>
        <a href="/dashboard/inbound">← Received mail</a>
      </p>
      <h1>{m.subject || '(no subject)'}</h1>
      <Fields fields={fields} />
      {m.attachments.length > 0 ? (
        <>
          <h2>Attachments</h2>
          <Table
            columns={['File', 'Type', 'Bytes']}
            rows={m.attachments.map((a, index) => [
              <a href={`${base}/attachments/${index}`}>{a.filename ?? `attachment ${index + 1}`}</a>,
              a.contentType,
              String(a.size),
            ])}
          />
        </>
      ) : null}
      <h2>Body</h2>
      {m.html ? (
        <iframe
          tabindex={-1}
          class="preview"
          title="The HTML body"
          sandbox=""
          src={`${base}/html`}
          referrerpolicy="no-referrer"
        />
      ) : null}
      {m.text ? <pre class="text-body">{m.text}</pre> : null}
      {!m.html && !m.text ? <p class="muted">The message has no text or HTML body.</p> : null}
    </>,
  );
}

/** The preview's policy without remote images: a stranger's mail could learn who opened it, and when. */
const RECEIVED_HTML_HEADERS = {
  ...PREVIEW_HEADERS,
  'Content-Security-Policy':
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
};

/** The HTML body on its own, framed by the message's page: no script, nothing loaded from elsewhere. */
async function htmlBody(c: Context<PageEnv>) {
  const m = await findMessage(c.env, c.var.signedIn.accountId, c.req.param('inboundId') ?? '');
  return c.html(m.html ?? '', 200, RECEIVED_HTML_HEADERS);
}

async function attachment(c: Context<PageEnv>) {
  const { accountId } = c.var.signedIn;
  const m = await findMessage(c.env, accountId, c.req.param('inboundId') ?? '');
  // The API's own rule for an index; any other text is no attachment of the message.
  const index = attachmentParams.shape.index.safeParse(c.req.param('index')).data ?? -1;
  const { body, headers } = await attachmentOf(c.env, accountId, m, index);
  return c.body(body, 200, { ...headers, 'Content-Security-Policy': "sandbox; default-src 'none'" });
}

export const inboundPages: PageDeclaration[] = [
  { method: 'get', path: '/dashboard/inbound', access: 'read', handler: listPage },
  { method: 'get', path: '/dashboard/inbound/:inboundId', access: 'read', handler: messagePage },
  { method: 'get', path: '/dashboard/inbound/:inboundId/html', access: 'read', handler: htmlBody },
  { method: 'get', path: '/dashboard/inbound/:inboundId/attachments/:index', access: 'read', handler: attachment },
];
