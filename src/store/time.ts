// The tables that grow with the mail keep their times as integer milliseconds since the epoch
// (migrations/0002_compact_rows.sql); everything outside src/db speaks ISO 8601, as the contract does.

export const msOf = (iso: string): number => Date.parse(iso);

export const isoOf = (ms: number): string => new Date(ms).toISOString();

export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoOf(ms));
