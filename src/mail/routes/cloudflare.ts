// The `cloudflare` route: postcode's composed email handed to Cloudflare Email Service through the Workers
// `send_email` binding (its structured builder), at most 50 recipients per call. Cloudflare writes the MIME,
// signs it (DKIM of the onboarded domain) and reports what happened later on the event queue
// (src/mail/provider-events.ts), naming the `messageId` each call answered.
import { toBase64 } from '../../base64';
import type { OutgoingMail, RecipientRefusal } from '../outgoing';
import { outcomeOfRefusals, type SmtpOutcome } from '../smtp/connection';

/** Recipients per `send()` call, to, cc and bcc together (Cloudflare's limit). */
export const CLOUDFLARE_MAX_RECIPIENTS = 50;

/** The headers Cloudflare takes besides any `X-` header; the rest it sets itself or refuses. */
const ALLOWED_HEADERS = new Set(
  [
    'In-Reply-To',
    'References',
    'List-Unsubscribe',
    'List-Unsubscribe-Post',
    'List-Id',
    'List-Archive',
    'List-Help',
    'List-Owner',
    'List-Post',
    'List-Subscribe',
    'Precedence',
    'Auto-Submitted',
    'Content-Language',
    'Keywords',
    'Comments',
    'Importance',
    'Priority',
    'Sensitivity',
    'Organization',
    'Require-Recipient-Valid-Since',
    'Archived-At',
  ].map((name) => name.toLowerCase()),
);

/** The binding's error codes by what they mean for the recipients of the call. */
const TRANSIENT_CODES = new Set(['E_RATE_LIMIT_EXCEEDED', 'E_DAILY_LIMIT_EXCEEDED', 'E_INTERNAL_SERVER_ERROR']);
const SUPPRESSED_CODE = 'E_RECIPIENT_SUPPRESSED';

export type CloudflareOutcome = SmtpOutcome & { providerIds?: Record<string, string> };

type Call = { to: string[]; cc: string[]; bcc: string[] };

/** The waiting recipients as to/cc/bcc (Bcc ones only in the envelope), in calls of at most 50. */
function callsOf(mail: OutgoingMail): Call[] {
  const envelope = mail.envelopeTo ?? mail.to;
  const inEnvelope = new Set(envelope);
  const to = mail.to.filter((a) => inEnvelope.has(a));
  const cc = (mail.cc ?? []).filter((a) => inEnvelope.has(a));
  const shown = new Set([...to, ...cc]);
  const tagged = [
    ...to.map((a) => ['to', a] as const),
    ...cc.map((a) => ['cc', a] as const),
    ...envelope.filter((a) => !shown.has(a)).map((a) => ['bcc', a] as const),
  ];
  const calls: Call[] = [];
  for (let i = 0; i < tagged.length; i += CLOUDFLARE_MAX_RECIPIENTS) {
    const call: Call = { to: [], cc: [], bcc: [] };
    for (const [kind, address] of tagged.slice(i, i + CLOUDFLARE_MAX_RECIPIENTS)) call[kind].push(address);
    calls.push(call);
  }
  return calls;
}

const recipientsOf = (call: Call) => [...call.to, ...call.cc, ...call.bcc];

async function attachmentsOf(mail: OutgoingMail): Promise<EmailAttachment[] | string> {
  const attachments: EmailAttachment[] = [];
  for (const attachment of mail.attachments ?? []) {
    const stream = await attachment.open();
    if (!stream) return `attachment ${attachment.filename}: content no longer available`;
    // Base64 text: the binding serialises it everywhere (`wrangler dev` refuses an ArrayBuffer).
    const content = toBase64(new Uint8Array(await new Response(stream).arrayBuffer()));
    const { filename, contentType: type } = attachment;
    attachments.push(
      attachment.contentId
        ? { disposition: 'inline', contentId: attachment.contentId, filename, type, content }
        : { disposition: 'attachment', filename, type, content },
    );
  }
  return attachments;
}

function headersOf(mail: OutgoingMail): Record<string, string> {
  return Object.fromEntries(
    Object.entries(mail.headers ?? {}).filter(([name]) => /^x-/i.test(name) || ALLOWED_HEADERS.has(name.toLowerCase())),
  );
}

/** The code of an error the binding threw (`E_…`), or null when it threw something else. */
const codeOf = (error: unknown): string | null => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
};

const describe = (error: unknown) =>
  `Cloudflare Email Service: ${codeOf(error) ?? 'error'}: ${error instanceof Error ? error.message : String(error)}`;

type CallResult =
  | { kind: 'accepted'; messageId: string }
  | { kind: 'suppressed'; reply: string }
  | { kind: 'permanent' | 'transient'; reply: string };

async function call(binding: SendEmail, builder: EmailMessageBuilder): Promise<CallResult> {
  try {
    const { messageId } = await binding.send(builder);
    return { kind: 'accepted', messageId };
  } catch (error) {
    const code = codeOf(error);
    if (code === SUPPRESSED_CODE) return { kind: 'suppressed', reply: describe(error) };
    // No code: the binding itself failed (the network, the service); a code we do not know is refused.
    if (code === null || TRANSIENT_CODES.has(code)) return { kind: 'transient', reply: describe(error) };
    return { kind: 'permanent', reply: describe(error) };
  }
}

/**
 * Sends the mail's waiting recipients through the binding. A call refused because a recipient is on
 * Cloudflare's suppression list (which names none) is made again per recipient, so only that one is
 * SUPPRESSED. A transient failure of the first call is the route's (it fails over); of a later one, the
 * recipients of that call wait for the retry while those already sent keep their message id.
 */
export async function sendThroughCloudflare(binding: SendEmail, mail: OutgoingMail): Promise<CloudflareOutcome> {
  const attachments = await attachmentsOf(mail);
  if (typeof attachments === 'string') return { kind: 'permanent', reply: attachments, refused: [] };
  const base = {
    from: mail.from.name ? { email: mail.from.email, name: mail.from.name } : mail.from.email,
    subject: mail.subject,
    ...(mail.html === null ? {} : { html: mail.html }),
    ...(mail.text === null ? {} : { text: mail.text }),
    ...(mail.replyTo?.length ? { replyTo: mail.replyTo[0]! } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    headers: headersOf(mail),
  };
  const providerIds: Record<string, string> = {};
  const refused: RecipientRefusal[] = [];
  const builderOf = (c: Call) =>
    ({
      ...base,
      ...(c.to.length ? { to: c.to } : {}),
      ...(c.cc.length ? { cc: c.cc } : {}),
      ...(c.bcc.length ? { bcc: c.bcc } : {}),
    }) as EmailMessageBuilder;
  const calls = callsOf(mail);
  for (const [index, each] of calls.entries()) {
    const result = await call(binding, builderOf(each));
    if (result.kind === 'suppressed' && recipientsOf(each).length > 1) {
      // Which one: each recipient on its own (Bcc stays Bcc).
      for (const kind of ['to', 'cc', 'bcc'] as const) {
        for (const address of each[kind]) {
          const single = await call(binding, builderOf({ to: [], cc: [], bcc: [], [kind]: [address] }));
          if (single.kind === 'accepted') providerIds[address] = single.messageId;
          else refusedAs(refused, address, single);
        }
      }
      continue;
    }
    if (result.kind === 'transient' && index === 0) return { kind: 'transient', reply: result.reply, routeFault: true };
    if (result.kind === 'accepted') {
      for (const address of recipientsOf(each)) providerIds[address] = result.messageId;
    } else for (const address of recipientsOf(each)) refusedAs(refused, address, result);
  }
  return { ...outcomeOfRefusals((mail.envelopeTo ?? mail.to).length, refused), providerIds };
}

function refusedAs(refused: RecipientRefusal[], email: string, result: Exclude<CallResult, { kind: 'accepted' }>) {
  refused.push({
    email,
    reply: result.reply,
    permanent: result.kind !== 'transient',
    ...(result.kind === 'suppressed' ? { suppressed: true } : {}),
  });
}
