// Upgrading a populated database: migrations/0002_compact_rows.sql on rows written by the first schema, in
// Miniflare's D1 (foreign keys on, as D1 has them). Nothing is lost, times keep their instant, payloads
// their bytes, and the counters their numbers.
import { readD1Migrations } from '@cloudflare/vitest-plugin';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type D1 = Awaited<ReturnType<Miniflare['getD1Database']>>;

let mf: Miniflare;
let db: D1;

const apply = async (name: string) => {
  const migration = (await readD1Migrations('./migrations')).find((m) => m.name === name)!;
  await db.batch(migration.queries.map((query) => db.prepare(query)));
};

const CREATED = '2026-11-02T10:00:00.123Z';
const SENT = '2026-11-02T10:00:01.456Z';
const PAYLOAD = `{"type":"email.sent","createdAt":"${SENT}","data":{"emailId":"em_one","to":["Ann@Example.com"],"subject":"Hi \\"you\\" ✓","status":"SENT","tags":[{"name":"kind","value":"receipt"}],"test":false,"recipient":"Ann@Example.com"}}`;

beforeAll(async () => {
  mf = new Miniflare(convertV4MiniflareOptions({ modules: true, script: 'export default {}', d1Databases: ['DB'] }));
  db = await mf.getD1Database('DB');
  await apply('0001_init.sql');
  await db.batch(
    [
      `INSERT INTO accounts (id, name, created_at) VALUES ('acc_one', 'One', '${CREATED}')`,
      `INSERT INTO emails (id, account_id, from_email, subject, status, message_id, created_at, updated_at, sent_at,
         due_at, tags) VALUES ('em_one', 'acc_one', 'shop@example.com', 'Hi', 'SENT', '<em_one@example.com>',
         '${CREATED}', '${SENT}', '${SENT}', NULL, '[{"name":"kind","value":"receipt"}]')`,
      `INSERT INTO emails (id, account_id, from_email, subject, status, message_id, created_at, updated_at, due_at,
         scheduled_at) VALUES ('em_two', 'acc_one', 'shop@example.com', 'Later', 'SCHEDULED', '<em_two@example.com>',
         '${CREATED}', '${CREATED}', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z')`,
      `INSERT INTO email_recipients (email_id, position, address, status, canonical, kind)
         VALUES ('em_one', 0, 'Ann@Example.com', 'SENT', 'ann@example.com', 'to'),
                ('em_two', 0, 'bob@example.com', 'QUEUED', 'bob@example.com', 'to')`,
      `INSERT INTO email_events (email_id, seq, type, at, detail) VALUES ('em_one', 1, 'queued', '${CREATED}', NULL),
         ('em_one', 2, 'sent', '${SENT}', 'Ann@Example.com')`,
      `INSERT INTO email_tags (email_id, name, value, account_id, test, created_at, status)
         VALUES ('em_one', 'kind', 'receipt', 'acc_one', 0, '${CREATED}', 'SENT')`,
      `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
         VALUES ('whk_one', 'acc_one', 'https://hooks.example.com', '["email.sent"]', 'whsec_x', '${CREATED}', '${CREATED}')`,
      `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, payload, status, attempts, last_status,
         due_at, created_at, updated_at)
         VALUES ('msg_done', 'whk_one', 'acc_one', 'email.sent', '${PAYLOAD.replaceAll("'", "''")}', 'delivered', 1, 200,
           '${SENT}', '${SENT}', '${SENT}'),
                ('msg_wait', 'whk_one', 'acc_one', 'webhook.test', '{"type":"webhook.test","createdAt":"${SENT}","data":{"webhookId":"whk_one"}}',
           'pending', 1, 500, '2026-11-02T10:05:00.000Z', '${SENT}', '${SENT}')`,
      `INSERT INTO otp_verifications (id, account_id, channel, session_id, email, sent_at, verified_at)
         VALUES ('ver_one', 'acc_one', 'backend', 'otp_x', 'ann@example.com', '${CREATED}', '${SENT}')`,
    ].map((sql) => db.prepare(sql)),
  );
  await apply('0002_compact_rows.sql');
});

afterAll(() => mf?.dispose());

const ms = (iso: string) => Date.parse(iso);

describe('migrations/0002_compact_rows.sql on a populated database', () => {
  it('keeps every row, with its times as the same instants in milliseconds', async () => {
    const emails = await db.prepare('SELECT * FROM emails ORDER BY id').all<Record<string, unknown>>();
    expect(emails.results).toMatchObject([
      { id: 'em_one', created_at: ms(CREATED), updated_at: ms(SENT), sent_at: ms(SENT), due_at: null, status: 'SENT' },
      {
        id: 'em_two',
        due_at: ms('2026-12-01T00:00:00.000Z'),
        scheduled_at: ms('2026-12-01T00:00:00.000Z'),
        status: 'SCHEDULED',
      },
    ]);
    expect(emails.results[0]).not.toHaveProperty('message_id');
    const events = await db.prepare('SELECT seq, type, at, detail FROM email_events ORDER BY seq').all();
    expect(events.results).toEqual([
      { seq: 1, type: 'queued', at: ms(CREATED), detail: null },
      { seq: 2, type: 'sent', at: ms(SENT), detail: 'Ann@Example.com' },
    ]);
    const recipients = await db.prepare('SELECT email_id, canonical FROM email_recipients ORDER BY email_id').all();
    expect(recipients.results).toEqual([
      { email_id: 'em_one', canonical: 'ann@example.com' },
      { email_id: 'em_two', canonical: 'bob@example.com' },
    ]);
    const tag = await db.prepare('SELECT created_at, status FROM email_tags').first();
    expect(tag).toEqual({ created_at: ms(CREATED), status: 'SENT' });
    const verification = await db.prepare('SELECT sent_at, verified_at FROM otp_verifications').first();
    expect(verification).toEqual({ sent_at: ms(CREATED), verified_at: ms(SENT) });
  });

  it("keeps a delivery's data, from which its payload is composed byte for byte; settled ones are due no more", async () => {
    const rows = await db
      .prepare('SELECT id, event_type, data, due_at, created_at FROM webhook_deliveries ORDER BY id')
      .all<{ id: string; event_type: string; data: string; due_at: number | null; created_at: number }>();
    const [done, waiting] = rows.results;
    const payload = (row: typeof done) =>
      `{"type":${JSON.stringify(row!.event_type)},"createdAt":"${new Date(row!.created_at).toISOString()}","data":${row!.data}}`;
    expect(payload(done)).toBe(PAYLOAD);
    expect(done!.due_at).toBeNull();
    expect(JSON.parse(waiting!.data)).toEqual({ webhookId: 'whk_one' });
    expect(waiting!.due_at).toBe(ms('2026-11-02T10:05:00.000Z'));
  });

  it('keeps the counters, and the triggers that keep them work on the new tables', async () => {
    const counts = () =>
      db.prepare('SELECT status, n FROM email_counts WHERE n > 0 ORDER BY status').all<{ status: string; n: number }>();
    expect((await counts()).results).toEqual([
      { status: 'SCHEDULED', n: 1 },
      { status: 'SENT', n: 1 },
    ]);
    await db.prepare(`UPDATE emails SET status = 'CANCELED' WHERE id = 'em_two'`).run();
    expect((await counts()).results).toEqual([
      { status: 'CANCELED', n: 1 },
      { status: 'SENT', n: 1 },
    ]);
    const tagCount = await db.prepare(`SELECT n FROM tag_counts WHERE status = 'SENT'`).first<{ n: number }>();
    expect(tagCount!.n).toBe(1);
    const deliveries = await db
      .prepare(`SELECT n FROM list_counts WHERE list = 'webhook_deliveries' AND owner_id = 'whk_one'`)
      .first<{ n: number }>();
    expect(deliveries!.n).toBe(2);
    // The recipients still belong to their email: deleting it takes them along.
    await db.prepare(`DELETE FROM emails WHERE id = 'em_two'`).run();
    const left = await db.prepare('SELECT COUNT(*) AS n FROM email_recipients').first<{ n: number }>();
    expect(left!.n).toBe(1);
  });
});
