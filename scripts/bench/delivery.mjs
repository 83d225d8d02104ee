// Delivery in the bench, against a pooled nodemailer client sending the same number to the same server (the
// baseline), lost and duplicated counted: mails queued through the API until the sink holds every one, and
// delivery alone (mails queued ahead, scheduled for one moment).
import nodemailer from 'nodemailer';
import { CONNECTIONS } from './load.mjs';
import { cpuWindow } from './proc.mjs';
import { SMTP_PORT } from './services.mjs';

export const json = (token) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });

/** Waits until the sink has seen no new message for `quietMs` (the consumer's backlog is drained). */
export async function waitForQuiet(sink, quietMs = 2000) {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const total = Object.values(await sink.counts()).reduce((a, b) => a + b, 0);
    if (total !== last) {
      last = total;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Queues `count` mails through the API (`fields` added to each), 10 at a time; returns the accepted ids. */
export async function queueMails(baseUrl, ready, count, fields = {}) {
  const ids = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await fetch(`${baseUrl}/api/v1/emails`, {
        method: 'POST',
        headers: json(ready.mailKey),
        body: JSON.stringify({ to: `d${i}@bench.test`, subject: `delivery ${i}`, text: 'bench', ...fields }),
      });
      const body = await res.json();
      if (res.status === 200) ids.push(body.data.id);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return ids;
}

/**
 * Waits until the sink holds every one of `ids` (at most 5 minutes); returns when that was (Date.now()), and
 * the lost and duplicated of `count` mails by Message-ID (<emailId@domain>).
 */
async function awaitDelivery(sink, ids, count) {
  const messageIds = ids.map((id) => `<${id}@postcode.dev>`);
  const delivered = async () => {
    const counts = await sink.counts();
    return messageIds.filter((m) => counts[m]).length;
  };
  const deadline = Date.now() + 300_000;
  while ((await delivered()) < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const doneAt = Date.now();
  await new Promise((r) => setTimeout(r, 1000)); // late duplicates would show up here
  const counts = await sink.counts();
  const lost = count - messageIds.filter((m) => counts[m]).length;
  const duplicated = messageIds.reduce((sum, m) => sum + Math.max((counts[m] ?? 0) - 1, 0), 0);
  return { doneAt, lost, duplicated };
}

/**
 * Queue and delivery together: `count` mails queued through the API (the clock starts at the first
 * request) until the sink holds every one; the API's work shares the worker thread with the deliveries.
 */
export async function deliveryRound(baseUrl, ready, sink, count) {
  await waitForQuiet(sink);
  await sink.reset();
  const started = Date.now();
  const ids = await queueMails(baseUrl, ready, count, { priority: 'URGENT' });
  const { doneAt, lost, duplicated } = await awaitDelivery(sink, ids, count);
  return { mailsPerSecond: ids.length / ((doneAt - started) / 1000), lost, duplicated };
}

/**
 * Delivery alone: `count` mails queued through the API, all scheduled for one moment `leadSeconds` ahead
 * (their queue messages carry that delay), and the clock runs from that moment until the sink holds every
 * one. Messages become visible up to a second after it (the delay is in whole seconds), which counts
 * against delivery.
 */
export async function scheduledDeliveryRound(baseUrl, ready, sink, count, leadSeconds, workerRoot) {
  await waitForQuiet(sink);
  await sink.reset();
  const dueAt = Date.now() + leadSeconds * 1000;
  const ids = await queueMails(baseUrl, ready, count, { scheduledAt: new Date(dueAt).toISOString() });
  if (Date.now() > dueAt - 1000) throw new Error(`queueing ${count} mails took more than ${leadSeconds - 1} s`);
  // The worker's CPU from just before the mails fall due until the last one arrived: delivery's alone.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - 500 - Date.now())));
  const window = cpuWindow(workerRoot);
  const { doneAt, lost, duplicated } = await awaitDelivery(sink, ids, count);
  const cpuMsPerMail = (window.stop().workerCpuSeconds * 1000) / ids.length;
  return { mailsPerSecond: ids.length / ((doneAt - dueAt) / 1000), lost, duplicated, cpuMsPerMail };
}

/** The baseline: a pooled nodemailer client sending `count` mails to the same server. */
export async function nodemailerRound(sink, count) {
  await sink.reset();
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: SMTP_PORT,
    secure: false,
    pool: true,
    maxConnections: CONNECTIONS,
    ignoreTLS: true,
  });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await transport.sendMail({
        from: 'bench@bench.test',
        to: `n${i}@bench.test`,
        subject: `baseline ${i}`,
        text: 'bench',
        messageId: `<n${i}.${started}@bench.test>`,
      });
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return { mailsPerSecond: count / seconds };
}

/** A domain of the account, verified (`npm start`'s local resolver publishes its records): mail from it is signed. */
export async function verifiedDomain(baseUrl, mailKey) {
  const call = async (path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: json(mailKey),
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const answer = await res.json();
    if (!answer.success) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
    return answer.data;
  };
  const name = `bench-${Date.now()}.example`;
  const { id } = await call('/api/v1/domains', { name });
  const { status } = await call(`/api/v1/domains/${id}/verify`);
  if (status !== 'verified') throw new Error(`${name} is ${status}, not verified`);
  return name;
}
