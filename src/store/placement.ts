// Where an account's data lives: its object near `region` (a location hint) or pinned to `jurisdiction`, and its
// bodies and attachments in that jurisdiction's buckets. The operator sets both until the account's object is
// made; the first call that reaches the account's data fixes them (`placed_at`), so the object is always made
// where the control plane says. An isolate keeps a placement it has read: once fixed, it never changes.
import type { Bindings } from '../env';
import { nowIso } from '../ids';
import { IsolateCache } from '../isolate-cache';

export const REGIONS = ['wnam', 'enam', 'sam', 'weur', 'eeur', 'apac', 'oc', 'afr', 'me'] as const;
export const JURISDICTIONS = ['eu', 'fedramp'] as const;
export type Region = (typeof REGIONS)[number];
export type Jurisdiction = (typeof JURISDICTIONS)[number];
export type Placement = { region: Region | null; jurisdiction: Jurisdiction | null };

type PlacementRow = { region: Region | null; jurisdiction: Jurisdiction | null; placed_at: string | null };

const NOWHERE: Placement = { region: null, jurisdiction: null };
const placements = new IsolateCache<Placement>({ ttlMs: 3_600_000, maxEntries: 10_000 });

/** The R2 bindings a jurisdiction's accounts need. */
export const bucketBindingsOf = (jurisdiction: Jurisdiction) =>
  jurisdiction === 'eu'
    ? (['BODIES_EU', 'ATTACHMENTS_EU'] as const)
    : (['BODIES_FEDRAMP', 'ATTACHMENTS_FEDRAMP'] as const);

/** The first binding of the jurisdiction's buckets this Worker lacks, or null when it has them all. */
export function missingBucketBinding(env: Partial<Record<string, unknown>>, jurisdiction: Jurisdiction | null) {
  if (jurisdiction === null) return null;
  return bucketBindingsOf(jurisdiction).find((name) => env[name] === undefined) ?? null;
}

async function readPlacement(db: D1Database, accountId: string): Promise<Placement> {
  const stmt = 'SELECT region, jurisdiction, placed_at FROM accounts WHERE id = ?';
  const read = (session: D1DatabaseSession) => session.prepare(stmt).bind(accountId).first<PlacementRow>();
  // A replica may not have an account made a moment ago: then the primary says.
  const row = (await read(db.withSession('first-unconstrained'))) ?? (await read(db.withSession('first-primary')));
  // An id the control plane does not know (a built-in or a test's): the default place, nothing to fix.
  if (!row) return NOWHERE;
  if (row.placed_at !== null) return { region: row.region, jurisdiction: row.jurisdiction };
  // The first call: fix the placement before anything reaches the object (the primary decides).
  const placed = await db
    .prepare(
      'UPDATE accounts SET placed_at = COALESCE(placed_at, ?) WHERE id = ? RETURNING region, jurisdiction, placed_at',
    )
    .bind(nowIso(), accountId)
    .first<PlacementRow>();
  return placed ? { region: placed.region, jurisdiction: placed.jurisdiction } : NOWHERE;
}

/** The account's placement, fixed by this call if it was not yet. */
export const placementOf = (env: Pick<Bindings, 'DB'>, accountId: string): Promise<Placement> =>
  placements.get(accountId, () => readPlacement(env.DB, accountId));

/**
 * The namespace of a jurisdiction's objects, or null where the runtime has none: workerd (`wrangler dev`, the
 * tests) does not implement jurisdictions, so there such an account's object is a separate object of the default
 * namespace (`eu:<account id>`), as distinct from the account's unpinned object as the jurisdiction's would be.
 */
function jurisdictionNamespace(namespace: Bindings['ACCOUNT_STORE'], jurisdiction: Jurisdiction) {
  try {
    return namespace.jurisdiction(jurisdiction);
  } catch (error) {
    if (String(error).includes('not implemented')) return null;
    throw error;
  }
}

/** The account's object, made where its placement says. */
export async function accountStub(env: Pick<Bindings, 'DB' | 'ACCOUNT_STORE'>, accountId: string) {
  const { region, jurisdiction } = await placementOf(env, accountId);
  const options = region ? { locationHint: region } : undefined;
  if (jurisdiction === null) return env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(accountId), options);
  const pinned = jurisdictionNamespace(env.ACCOUNT_STORE, jurisdiction);
  if (pinned) return pinned.get(pinned.idFromName(accountId), options);
  return env.ACCOUNT_STORE.get(env.ACCOUNT_STORE.idFromName(`${jurisdiction}:${accountId}`), options);
}

/** The account's buckets for bodies and attachments: its jurisdiction's, else the default ones. */
export async function bucketsOf(
  env: Bindings,
  accountId: string,
): Promise<{ bodies: R2Bucket; attachments: R2Bucket }> {
  const { jurisdiction } = await placementOf(env, accountId);
  if (jurisdiction === null) return { bodies: env.BODIES, attachments: env.ATTACHMENTS };
  const [bodies, attachments] = bucketBindingsOf(jurisdiction);
  const all = env as unknown as Record<string, R2Bucket | undefined>;
  const found = { bodies: all[bodies], attachments: all[attachments] };
  if (!found.bodies || !found.attachments)
    throw new Error(`the ${jurisdiction} buckets are not bound (${bodies}, ${attachments})`);
  return { bodies: found.bodies, attachments: found.attachments };
}
