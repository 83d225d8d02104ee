/** Recipients accepted on a UTC day (YYYY-MM-DD), for the daily warm-up allowance. */

/** Adds `count` to the day's usage unless that would pass `allowance`; false when refused. */
export async function reserveDailyRecipients(db: D1Database, day: string, count: number, allowance: number | null) {
  const cap = allowance ?? Number.MAX_SAFE_INTEGER;
  if (count > cap) return false;
  const result = await db
    .prepare(
      `INSERT INTO daily_usage (day, recipients) VALUES (?1, ?2)
       ON CONFLICT(day) DO UPDATE SET recipients = recipients + ?2 WHERE recipients + ?2 <= ?3`,
    )
    .bind(day, count, cap)
    .run();
  return result.meta.changes > 0;
}

/** Gives back a reservation whose email could not be queued. */
export async function releaseDailyRecipients(db: D1Database, day: string, count: number) {
  await db.prepare('UPDATE daily_usage SET recipients = MAX(recipients - ?, 0) WHERE day = ?').bind(count, day).run();
}
