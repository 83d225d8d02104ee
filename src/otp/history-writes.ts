// Verification history is written after the verify has answered (one D1 round trip fewer on its path).
// The history routes wait for the writes still under way in this isolate for their account, so a caller
// reads its own verification; a write the isolate does not finish is still in the recipient object's
// outbox, whose alarm writes it (see SessionOutbox).
import { waitUntil } from 'cloudflare:workers';

const underWay = new Map<string, Set<Promise<unknown>>>();

/** Runs `write` after the response, remembered for the account's history reads until it settles. */
export function writeAfterResponse(accountId: string, write: () => Promise<unknown>): void {
  const writes = underWay.get(accountId) ?? new Set();
  underWay.set(accountId, writes);
  const done: Promise<unknown> = write()
    .catch(() => undefined) // the outbox keeps what failed
    .finally(() => {
      writes.delete(done);
      if (writes.size === 0) underWay.delete(accountId);
    });
  writes.add(done);
  waitUntil(done);
}

/** Resolves once this isolate's history writes of the account, started before the call, have settled. */
export async function historyWritten(accountId: string): Promise<void> {
  const writes = underWay.get(accountId);
  if (writes) await Promise.all(writes);
}
