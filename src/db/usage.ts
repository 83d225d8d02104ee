/** Recipients accepted on a UTC day (YYYY-MM-DD), for the daily warm-up allowance. */

/**
 * Adds `count` to the day's usage unless that would pass the allowance in the settings (null =
 * unlimited). Meant as the gate of `insertEmail`: it changes no row when the allowance is full.
 */
export function reserveDailyRecipients(db: D1Database, day: string, count: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO daily_usage (day, recipients)
       SELECT ?1, ?2 WHERE ?2 <= COALESCE((SELECT daily_allowance FROM settings WHERE id = 1), ?3)
       ON CONFLICT(day) DO UPDATE SET recipients = recipients + ?2
       WHERE recipients + ?2 <= COALESCE((SELECT daily_allowance FROM settings WHERE id = 1), ?3)`,
    )
    .bind(day, count, Number.MAX_SAFE_INTEGER);
}

/** Gives back a reservation whose email could not be queued. */
export async function releaseDailyRecipients(db: D1Database, day: string, count: number) {
  await db.prepare('UPDATE daily_usage SET recipients = MAX(recipients - ?, 0) WHERE day = ?').bind(count, day).run();
}
