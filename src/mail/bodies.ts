// Email bodies live in R2 (binding BODIES), one JSON object per email under its id: a 30 KB html body in a
// D1 row would make the database hold a few hundred thousand emails, and every read of a row pay for it.
// Delivery reads a body back to send it, the detail to show it; the send log never does.
import { listInlineBodies, markBodiesMoved } from '../db/emails';

export type EmailBody = { html: string | null; text: string | null };

/** Where an email's body is: in R2 under `bodyKey`, or inline in its row (stored before bodies moved). */
export type BodySource = EmailBody & { bodyKey: string | null };

/** The R2 key of an email's body. */
export const bodyKeyOf = (emailId: string) => emailId;

/** Stores the bodies of accepted emails, before their rows name them. */
export async function storeBodies(bucket: R2Bucket, emails: (EmailBody & { id: string })[]): Promise<void> {
  await Promise.all(
    emails.map((email) =>
      bucket.put(bodyKeyOf(email.id), JSON.stringify({ html: email.html, text: email.text }), {
        httpMetadata: { contentType: 'application/json' },
      }),
    ),
  );
}

/** A body that R2 does not have: the email cannot be sent (nothing will bring it back). */
export class BodyMissing extends Error {
  constructor(key: string) {
    super(`554 5.3.0 the message body (${key}) is missing from storage`);
  }
}

/** The body of an email, or null when R2 has none under its key. */
export async function findBody(bucket: R2Bucket, source: BodySource): Promise<EmailBody | null> {
  if (source.bodyKey === null) return { html: source.html, text: source.text };
  const object = await bucket.get(source.bodyKey);
  return object === null ? null : ((await object.json()) as EmailBody);
}

/** The body of an email for sending; throws `BodyMissing` when R2 has none under its key. */
export async function readBody(bucket: R2Bucket, source: BodySource): Promise<EmailBody> {
  const body = await findBody(bucket, source);
  if (body === null) throw new BodyMissing(source.bodyKey!);
  return body;
}

/** Inline bodies moved per scheduled run: ~33 KB each, so a run writes a few MB to R2 at most. */
export const INLINE_BODY_BATCH = 100;

/**
 * Moves the bodies of rows stored before bodies lived in R2, one batch per run (the scheduled handler's):
 * each is written to R2 first, then its row names it, so a failure part-way loses nothing.
 */
export async function moveInlineBodies(db: D1Database, bucket: R2Bucket): Promise<number> {
  const rows = await listInlineBodies(db, INLINE_BODY_BATCH);
  if (rows.length === 0) return 0;
  await storeBodies(bucket, rows);
  await markBodiesMoved(
    db,
    rows.map((r) => ({ id: r.id, bodyKey: bodyKeyOf(r.id) })),
  );
  return rows.length;
}
