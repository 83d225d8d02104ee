import { nowIso } from '../../ids';
import { IsolateCache } from '../../isolate-cache';

export type Settings = { frozen: boolean; dailyAllowance: number | null; updatedAt: string };

type SettingsRow = { frozen: number; daily_allowance: number | null; updated_at: string };

const toSettings = (row: SettingsRow): Settings => ({
  frozen: row.frozen === 1,
  dailyAllowance: row.daily_allowance,
  updatedAt: row.updated_at,
});

export async function getSettings(db: D1Database): Promise<Settings> {
  const row = await db
    .prepare('SELECT frozen, daily_allowance, updated_at FROM settings WHERE id = 1')
    .first<SettingsRow>();
  return row ? toSettings(row) : { frozen: false, dailyAllowance: null, updatedAt: nowIso(new Date(0)) };
}

/** Fields left undefined keep their value; `dailyAllowance: null` means unlimited. */
export async function updateSettings(
  db: D1Database,
  change: { frozen?: boolean; dailyAllowance?: number | null },
): Promise<Settings> {
  const row = await db
    .prepare(
      `UPDATE settings SET
         frozen = CASE WHEN ?1 IS NULL THEN frozen ELSE ?1 END,
         daily_allowance = CASE WHEN ?2 = 1 THEN ?3 ELSE daily_allowance END,
         updated_at = ?4
       WHERE id = 1 RETURNING frozen, daily_allowance, updated_at`,
    )
    .bind(
      change.frozen === undefined ? null : change.frozen ? 1 : 0,
      change.dailyAllowance === undefined ? 0 : 1,
      change.dailyAllowance ?? null,
      nowIso(),
    )
    .first<SettingsRow>();
  return toSettings(row!);
}

const cached = new IsolateCache<Settings>();

/**
 * The settings as this isolate last read them (at most ISOLATE_CACHE_TTL_MS old; a change made here is seen at
 * once): what accepting an email passes to the account's object. A freeze reaches other isolates within the TTL.
 */
export const currentSettings = (db: D1Database): Promise<Settings> => cached.get('settings', () => getSettings(db));

/** After a change in this isolate. */
export const forgetSettings = () => cached.forget('settings');
