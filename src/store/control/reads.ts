// Reads that may be a second stale go through a D1 session, so that with read replication on, the nearest
// replica can answer them instead of the primary that every write of the service waits on. Without
// replication (and under `wrangler dev`) a session reads the one database.

/** What a read needs of D1: the database itself, or one of its sessions. */
export type D1Reader = Pick<D1Database, 'prepare' | 'batch'>;

/** Any replica may answer: lists (the send log, templates, OTP history) can be a second behind. */
export const replicaReads = (db: D1Database): D1Reader => db.withSession('first-unconstrained');

/**
 * A lookup of a row the caller may have written a moment ago (an email just queued, a template just
 * created): a replica first, and the primary when the replica does not have it yet, so that it is never
 * answered "not found" while it exists.
 */
export async function readOwnWrite<T>(db: D1Database, read: (reader: D1Reader) => Promise<T | null>) {
  return (await read(replicaReads(db))) ?? read(db.withSession('first-primary'));
}
