// Finding the account of something that names only itself: an email id (a bounce's token, a returned
// Message-ID) carries its account's tag, which the control plane maps to the account; a delivery provider's
// message id is looked up in the provider index. Both answers never change, so this isolate keeps them.
import type { Bindings } from '../env';
import { accountTagOfEmailId } from '../ids';
import { IsolateCache } from '../isolate-cache';
import { accountIdOfTag } from './control/accounts';

const byTag = new IsolateCache<string | null>({ ttlMs: 3_600_000, keep: (id) => id !== null });

/** The account of an email id, or null when the id is not ours or names no account. */
export async function accountOfEmailId(env: Pick<Bindings, 'DB'>, emailId: string): Promise<string | null> {
  const tag = accountTagOfEmailId(emailId);
  return tag === null ? null : byTag.get(tag, () => accountIdOfTag(env.DB, tag));
}

type ProviderIndexRpc = {
  note(accountId: string, providerIds: string[]): Promise<void>;
  accountOf(providerId: string): Promise<string | null>;
};

async function shardOf(env: Pick<Bindings, 'PROVIDER_INDEX'>, providerId: string): Promise<ProviderIndexRpc> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(providerId)));
  const name = `provider-index:${digest[0]!.toString(16).padStart(2, '0')}`;
  return env.PROVIDER_INDEX.get(env.PROVIDER_INDEX.idFromName(name)) as unknown as ProviderIndexRpc;
}

/** Records which account sent the messages a provider named with these ids. */
export async function noteProviderIds(env: Pick<Bindings, 'PROVIDER_INDEX'>, accountId: string, ids: string[]) {
  const byShard = new Map<ProviderIndexRpc, string[]>();
  for (const id of new Set(ids)) {
    const shard = await shardOf(env, id);
    byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
  }
  await Promise.all([...byShard].map(([shard, list]) => shard.note(accountId, list)));
}

/** The account that sent the message a provider named with this id, or null. */
export async function accountOfProviderId(env: Pick<Bindings, 'PROVIDER_INDEX'>, providerId: string) {
  return (await shardOf(env, providerId)).accountOf(providerId);
}
