// Email bodies live in R2 (binding BODIES, or the account's jurisdiction's), one JSON object per email under its
// id: a 30 KB html body in a row would make an account's database hold a few hundred thousand emails, and every
// read of a row pay for it. Accepting keeps a body in the account's object (so that queueing waits for nothing
// outside the account's region) and its alarm moves it here right after the answer. Delivery reads a body back to
// send it, the detail to show it; the send log never does.

import { bodiesToMove, type EmailBody, forgetBodies } from '../store/account/bodies';

export type { EmailBody };

import type { AccountSql } from '../store/account/object-sql';

/** The R2 key of an email's body. */
export const bodyKeyOf = (emailId: string) => emailId;

/** Stores the bodies of accepted emails, before their rows are written. */
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
export async function findBody(bucket: R2Bucket, emailId: string): Promise<EmailBody | null> {
  const object = await bucket.get(bodyKeyOf(emailId));
  return object === null ? null : ((await object.json()) as EmailBody);
}

/** The body of an email for sending; throws `BodyMissing` when R2 has none under its key. */
export async function readBody(bucket: R2Bucket, emailId: string): Promise<EmailBody> {
  const body = await findBody(bucket, emailId);
  if (body === null) throw new BodyMissing(bodyKeyOf(emailId));
  return body;
}

/** How many bodies one alarm moves to R2 (the alarm comes back at once while some are left). */
const MOVE_BATCH = 50;

/**
 * Moves bodies the account's object keeps (accepted a moment ago) to R2: put first, then forgotten there, so a
 * failure part-way leaves them for the next alarm (a put of the same body again changes nothing).
 */
export async function moveBodies(db: AccountSql, bucket: R2Bucket): Promise<number> {
  const kept = await bodiesToMove(db, MOVE_BATCH);
  if (kept.length === 0) return 0;
  await Promise.all(
    kept.map(({ emailId, body }) =>
      bucket.put(bodyKeyOf(emailId), body, { httpMetadata: { contentType: 'application/json' } }),
    ),
  );
  await forgetBodies(
    db,
    kept.map((k) => k.emailId),
  );
  return kept.length;
}
