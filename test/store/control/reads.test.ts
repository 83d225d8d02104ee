// Reads of the control plane through D1 sessions: lists from any replica, and a lookup of a row the caller may
// have just written that never answers "not found" while the row exists. (An account's own data is read in its
// object, not through D1.)
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { type D1Reader, readOwnWrite, replicaReads } from '../../../src/store/control/reads';
import { newAccount } from '../../support/api';
import { addDomain, getDomain } from '../../support/domains';

/** A database whose sessions answer from `rows[constraint]`, recording which were opened. */
function fakeDatabase(rows: Record<string, string | null>) {
  const opened: string[] = [];
  const db = {
    withSession(constraint: string) {
      opened.push(constraint);
      return { rows: rows[constraint] } as unknown as D1Reader;
    },
  } as unknown as D1Database;
  const read = async (reader: D1Reader) => (reader as unknown as { rows: string | null }).rows;
  return { db, opened, read };
}

describe('readOwnWrite', () => {
  it('answers from a replica when it has the row, without asking the primary', async () => {
    const { db, opened, read } = fakeDatabase({ 'first-unconstrained': 'row' });
    expect(await readOwnWrite(db, read)).toBe('row');
    expect(opened).toEqual(['first-unconstrained']);
  });

  it('asks the primary when the replica does not have the row yet', async () => {
    const { db, opened, read } = fakeDatabase({ 'first-unconstrained': null, 'first-primary': 'row' });
    expect(await readOwnWrite(db, read)).toBe('row');
    expect(opened).toEqual(['first-unconstrained', 'first-primary']);
  });

  it('is null when neither has it', async () => {
    const { db, read } = fakeDatabase({ 'first-unconstrained': null, 'first-primary': null });
    expect(await readOwnWrite(db, read)).toBeNull();
  });
});

describe('reads through sessions of the real D1', () => {
  it('a session reads what the database holds', async () => {
    const row = await replicaReads(env.DB).prepare('SELECT 1 AS one').first<{ one: number }>();
    expect(row).toEqual({ one: 1 });
  });

  it('a domain just added is found at once', async () => {
    const { mailKey } = await newAccount();
    const domain = await addDomain(mailKey);
    expect((await getDomain(mailKey, domain.id)).status).toBe(200);
  });
});
