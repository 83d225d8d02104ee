// `postcode domains add|verify`: a sending domain and the DNS records to publish for it, as a table on a terminal.
import type { DataOf, Postcode } from '../../index.js';
import { type Command, dataOf, localFailure } from '../command.js';
import { everyItem } from '../lists.js';
import { table } from '../output.js';

type Domain = DataOf<'postApiV1Domains'>;

/** The domain's line, then its records: MX values with their priority first, as a zone file writes them. */
export function domainText(domain: Domain): string {
  const records = table(
    ['TYPE', 'NAME', 'VALUE', 'STATUS'],
    domain.records.map((r) => [
      r.type,
      r.name,
      r.priority === undefined ? r.value : `${r.priority} ${r.value}`,
      r.status,
    ]),
  );
  return `${domain.name} (${domain.id}): ${domain.status}\n\nPublish these records:\n${records}`;
}

const add: Command = {
  path: ['domains', 'add'],
  summary: 'Adds a sending domain and shows the DNS records to publish',
  args: [{ name: 'name', summary: 'The domain, e.g. acme.example', required: true }],
  flags: [],
  details: `Needs a live key with mail_api. Publish the records, then run \`postcode domains verify <name>\`.

  postcode domains add acme.example`,
  async run(ctx) {
    const data = dataOf(await ctx.client().domains.create({ name: ctx.args.name! }));
    return { data, human: () => domainText(data) };
  },
};

/** A domain id as given, or the id of the account's domain of this name. */
async function domainId(pc: Postcode, idOrName: string): Promise<string> {
  if (/^dom_[a-z2-7]+$/.test(idOrName)) return idOrName;
  // As the service keeps names: lower case, an internationalised one in punycode.
  let name = idOrName.toLowerCase();
  try {
    name = new URL(`http://${idOrName}/`).hostname;
  } catch {}
  name = name.replace(/\.$/, '');
  const domain = (await everyItem(pc.domains.list({ limit: 100 }))).find((d) => d.name === name);
  if (domain) return domain.id;
  throw localFailure('DOMAIN_NOT_FOUND', `No domain ${JSON.stringify(idOrName)} in this account`);
}

const verify: Command = {
  path: ['domains', 'verify'],
  summary: 'Looks the DNS records up now and shows what was found',
  args: [{ name: 'domain', summary: 'The domain id (dom_…) or its name', required: true }],
  flags: [],
  details: `  postcode domains verify acme.example`,
  async run(ctx) {
    const pc = ctx.client();
    const data = dataOf(await pc.domains.verify(await domainId(pc, ctx.args.domain!)));
    return { data, human: () => domainText(data) };
  },
};

export const domainCommands: Command[] = [add, verify];
