// `postcode emails send|list|get`: queue an email (or check one with --dry-run), read the send log, read one email.
import type { DataOf, QueryOf } from '../../index.js';
import { type Command, dataOf } from '../command.js';
import { LIST_FLAGS, listed, pageQuery } from '../lists.js';
import { fields, table } from '../output.js';
import { checkSendBody, dryRunRequest, dryRunText, SEND_FLAGS, sendBody } from '../send-body.js';

type Email = DataOf<'getApiV1Emails'>['emails'][number];
type Detail = DataOf<'getApiV1EmailsEmailId'>;

const send: Command = {
  path: ['emails', 'send'],
  summary: 'Queues an email from flags, a JSON file, or both (--dry-run: checks it and sends nothing)',
  flags: SEND_FLAGS,
  details: `A flag replaces the field of the same name in --file (a repeatable flag gives the whole list); --var sets
one key of vars and keeps the file's others. --dry-run checks the body against the schema of the served
document and prints the request instead of sending it; it needs no key.

  postcode emails send --from "Acme <hello@acme.example>" --to ada@example.com --subject Hi --text Hello
  postcode emails send --file body.json --to linus@example.com --tag category=welcome
  postcode emails send --file body.json --dry-run`,
  async run(ctx) {
    const body = sendBody(ctx.flags);
    const idempotencyKey = ctx.flags.string('idempotency-key');
    if (ctx.flags.boolean('dry-run')) {
      const request = dryRunRequest(checkSendBody(body), ctx.settings().baseUrl, idempotencyKey);
      return { data: request, human: () => dryRunText(request) };
    }
    const pc = ctx.client();
    const data = dataOf(await pc.emails.send(body as never, idempotencyKey ? { idempotencyKey } : {}));
    return { data, human: () => `${data.status === 'SCHEDULED' ? 'Scheduled' : 'Queued'} ${data.id}\n` };
  },
};

const STATUSES = 'SCHEDULED, QUEUED, SENT, DELIVERED, BOUNCED, FAILED, SUPPRESSED, CANCELED';

const emailRows = (emails: Email[]) =>
  table(
    ['ID', 'STATUS', 'CREATED', 'TO', 'SUBJECT'],
    emails.map((e) => [e.id, e.status, e.createdAt, e.toAddresses.join(', '), e.subject]),
  );

const list: Command = {
  path: ['emails', 'list'],
  summary: 'Lists the send log, newest first, by status, tag or recipient',
  flags: [
    { name: 'status', type: 'string', value: 'STATUS', summary: `One of ${STATUSES}` },
    { name: 'tag', type: 'string', value: 'NAME=VALUE', summary: 'Only emails with this tag (or NAME:VALUE)' },
    { name: 'to', type: 'string', value: 'ADDRESS', summary: 'Only emails to this recipient' },
    { name: 'bounce-reason', type: 'string', value: 'REASON', summary: 'Only emails with a bounce of this reason' },
    ...LIST_FLAGS,
  ],
  details: `JSON: the page as the API answers it ({ emails, total, page, totalPages, nextCursor }); with --all, one
array of every email.

  postcode emails list --status SENT --tag category=welcome --limit 10`,
  async run(ctx) {
    const tag = ctx.flags.string('tag');
    const query: QueryOf<'getApiV1Emails'> = {
      ...(ctx.flags.has('status') ? { status: ctx.flags.string('status') as Email['status'] } : {}),
      // The API filters by name:value; name=value is how `emails send --tag` writes one.
      ...(tag !== undefined ? { tag: tag.replace('=', ':') } : {}),
      ...(ctx.flags.has('to') ? { to: ctx.flags.string('to') } : {}),
      ...(ctx.flags.has('bounce-reason') ? { bounceReason: ctx.flags.string('bounce-reason') as never } : {}),
      ...pageQuery(ctx),
    };
    return listed(ctx, ctx.client().emails.list(query), (page) => page.emails, emailRows);
  },
};

function detailText(email: Detail): string {
  const recipients = table(
    ['RECIPIENT', 'KIND', 'STATUS', 'REPLY'],
    email.recipients.map((r) => [r.email, r.kind, r.status, r.bounceReason ?? r.reply]),
  );
  const events = table(
    ['AT', 'EVENT', 'DETAIL'],
    email.events.map((e) => [e.at, e.type, e.detail]),
  );
  return `${fields([
    ['id', email.id],
    ['status', email.status],
    ['from', email.from],
    ['to', email.to.join(', ')],
    ['cc', email.cc.join(', ')],
    ['subject', email.subject],
    ['tags', email.tags.map((t) => `${t.name}=${t.value}`).join(', ')],
    ['created', email.createdAt],
    ['scheduled', email.scheduledAt],
    ['sent', email.sentAt],
    ['test', email.test ? 'yes (a test key: never reaches SMTP)' : undefined],
  ])}\n${recipients}\n${events}`;
}

const get: Command = {
  path: ['emails', 'get'],
  summary: 'Shows one email: its status, recipients and events',
  args: [{ name: 'id', summary: 'The email id (em_…)', required: true }],
  flags: [],
  async run(ctx) {
    const data = dataOf(await ctx.client().emails.get(ctx.args.id!));
    return { data, human: () => detailText(data) };
  },
};

export const emailCommands: Command[] = [send, list, get];
