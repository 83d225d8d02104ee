import type { Bindings } from '../env';
import { deleteEmail, insertEmail, type NewEmail } from '../db/emails';

/** The queue carries only the id: the row in D1 is the single source of truth for content and status. */
export type MailJob = { emailId: string };

/** Stores the email as QUEUED and hands it to the delivery queue; nothing is left behind if either step fails. */
export async function enqueueEmail(env: Bindings, email: NewEmail): Promise<void> {
  await insertEmail(env.DB, email);
  try {
    await env.MAIL_QUEUE.send({ emailId: email.id } satisfies MailJob, { contentType: 'json' });
  } catch (error) {
    await deleteEmail(env.DB, email.id);
    throw error;
  }
}
