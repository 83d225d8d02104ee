// The domains an account can claim as its own in a From header: its sending domains and its receiving domains.
// Mail from one of them that fails DMARC is flagged (someone else wrote it).
import type { Bindings } from '../env';
import { domainNamesOf } from '../store/control/domains';
import { receivingDomains } from './routes';

export async function ownDomainsOf(env: Bindings, accountId: string): Promise<string[]> {
  const [sending, receiving] = await Promise.all([domainNamesOf(env.DB, accountId), receivingDomains(env, accountId)]);
  return [...sending, ...receiving.map((d) => d.domain)];
}
