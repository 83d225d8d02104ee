// Email bodies live in R2 (binding BODIES), one JSON object per email under its id: a 30 KB html body in a
// D1 row would make the database hold a few hundred thousand emails, and every read of a row pay for it.
// Delivery reads a body back to send it, the detail to show it; the send log never does.

export type EmailBody = { html: string | null; text: string | null };

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
