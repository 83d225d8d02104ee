// What `npm run simulate` needs of the service `npm start` runs: where it listens (postcode-ready.json in its
// state directory), its local inbox, and a mail postcode sent as that inbox caught it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const stateDir = resolve(root, process.env.POSTCODE_STATE_DIR ?? '.wrangler/state');
export const inbox = `http://127.0.0.1:${process.env.POSTCODE_INBOX_PORT ?? 1080}`;

/** postcode-ready.json: the base URL, the demo account's keys, … (npm start writes it once it is up). */
export function readyService() {
  try {
    return JSON.parse(readFileSync(join(stateDir, 'postcode-ready.json'), 'utf8'));
  } catch {
    console.error(`no running service found in ${stateDir}: start it with npm start`);
    process.exit(1);
  }
}

/** The mail as the local inbox caught it: its envelope sender (the return path), Message-ID and subject. */
export async function sentMail(emailId) {
  let mail;
  // A mail just SENT may still be on its way into the inbox's store.
  for (let tries = 0; tries < 25 && !mail; tries++) {
    if (tries > 0) await new Promise((r) => setTimeout(r, 200));
    const mails = await (await fetch(`${inbox}/email`)).json();
    mail = mails.find((m) => m.messageId?.replace(/^<|>$/g, '').startsWith(`${emailId}@`) && m.envelope);
  }
  if (!mail) {
    console.error(`no mail of ${emailId} in the inbox at ${inbox} (was it sent? mail of a test key never is)`);
    process.exit(1);
  }
  const messageId = mail.messageId.startsWith('<') ? mail.messageId : `<${mail.messageId}>`;
  return { returnPath: mail.envelope.from.address, messageId, subject: mail.subject };
}

/** Hands a message to the Worker's email() handler as Email Routing would (wrangler dev's local endpoint). */
export async function handToWorker(baseUrl, from, to, raw) {
  const url = `${baseUrl}/cdn-cgi/handler/email?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  const res = await fetch(url, { method: 'POST', body: raw });
  return { status: res.status, text: await res.text() };
}
