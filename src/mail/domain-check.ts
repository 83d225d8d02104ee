// What a sending domain must publish, and what a look at DNS makes of it: each record's status, the domain's
// status, and when to look again. Pure functions over the lookups' answers; src/mail/domains.ts runs them.
import type { DomainsConfig } from '../config';
import { nowIso } from '../ids';
import type { DnsAnswer, RecordType } from '../net/dns';
import type { DkimSelector, Domain, DomainStatus, RecordStatus } from '../store/control/domains';
import { dkimRecordValue } from './dkim-keys';

export type DomainRecord = {
  purpose: 'dkim' | 'return_path_mx' | 'return_path_spf' | 'dmarc' | 'inbound_mx';
  type: RecordType;
  name: string;
  value: string;
  priority?: number;
  status: RecordStatus;
};

/** The DMARC record a domain is advised to publish; any valid DMARC record counts. */
export const RECOMMENDED_DMARC = 'v=DMARC1; p=none;';
const MX_PRIORITY = 10;
const HOUR_MS = 3_600_000;
/** A domain without its DKIM record this long after it was added has failed. */
export const PENDING_LIMIT_MS = 72 * HOUR_MS;
/** A selector replaced by a rotation keeps signing this long, so mail in flight still verifies. */
export const ROTATION_OVERLAP_MS = 7 * 24 * HOUR_MS;
const DAILY_MS = 24 * HOUR_MS;
/** Pending checks back off from 5 minutes, doubling, to 6 hours. */
const FIRST_RETRY_MS = 5 * 60_000;
const LAST_RETRY_MS = 6 * HOUR_MS;
/** A resolver that did not answer: look again soon, change nothing. */
const UNAVAILABLE_RETRY_MS = 15 * 60_000;

export const returnPathName = (config: DomainsConfig, domain: string) => `${config.returnPathSubdomain}.${domain}`;
const dkimName = (selector: string, domain: string) => `${selector}._domainkey.${domain}`;

/** The selectors a domain lists: every one not yet retired. */
const listedSelectors = (domain: Domain, now: number) =>
  domain.selectors.filter((s) => s.retiresAt === null || s.retiresAt > now);

/** The records the domain publishes, each with its last seen status. */
export function domainRecords(domain: Domain, config: DomainsConfig, now = Date.now()): DomainRecord[] {
  const returnPath = returnPathName(config, domain.name);
  return [
    ...listedSelectors(domain, now).map(
      (s): DomainRecord => ({
        purpose: 'dkim',
        type: 'TXT',
        name: dkimName(s.selector, domain.name),
        value: dkimRecordValue(s.publicKey),
        status: s.status,
      }),
    ),
    ...(config.returnPathMx
      ? [
          {
            purpose: 'return_path_mx',
            type: 'MX',
            name: returnPath,
            value: config.returnPathMx,
            priority: MX_PRIORITY,
            status: domain.returnPathStatus,
          } satisfies DomainRecord,
        ]
      : []),
    ...(config.returnPathMx && config.spfInclude
      ? [
          {
            purpose: 'return_path_spf',
            type: 'TXT',
            name: returnPath,
            value: `v=spf1 include:${config.spfInclude} -all`,
            status: domain.spfStatus,
          } satisfies DomainRecord,
        ]
      : []),
    {
      purpose: 'dmarc',
      type: 'TXT',
      name: `_dmarc.${domain.name}`,
      value: RECOMMENDED_DMARC,
      status: domain.dmarcStatus,
    },
    ...(domain.inboundName && config.inboundMx
      ? [
          {
            purpose: 'inbound_mx',
            type: 'MX',
            name: domain.inboundName,
            value: config.inboundMx,
            priority: MX_PRIORITY,
            status: domain.inboundStatus,
          } satisfies DomainRecord,
        ]
      : []),
  ];
}

/** The lookups a check makes, by record name and type. */
export type Lookup = (name: string, type: RecordType) => Promise<DnsAnswer>;

/** A TXT value's tags (`k=v; k=v`), whitespace inside values removed (RFC 6376 3.2). */
function tags(value: string): Map<string, string> {
  return new Map(
    value
      .split(';')
      .map((tag) => tag.split('='))
      .filter((parts) => parts.length >= 2)
      .map(([key, ...rest]) => [key!.trim().toLowerCase(), rest.join('=').replace(/\s+/g, '')]),
  );
}

const hasDkimKey = (answer: DnsAnswer, publicKey: string) =>
  answer.kind === 'found' && answer.values.some((value) => tags(value).get('p') === publicKey);

const hostOf = (mxData: string) => (mxData.trim().split(/\s+/).at(-1) ?? '').replace(/\.$/, '').toLowerCase();
const hasMx = (answer: DnsAnswer, host: string) =>
  answer.kind === 'found' && answer.values.some((value) => hostOf(value) === host);

const hasSpfInclude = (answer: DnsAnswer, include: string) =>
  answer.kind === 'found' &&
  answer.values.some(
    (value) =>
      /^v=spf1(\s|$)/i.test(value.trim()) &&
      value
        .toLowerCase()
        .split(/\s+/)
        .some((term) => term.replace(/^[+?~]/, '') === `include:${include}`),
  );

const hasDmarc = (answer: DnsAnswer) =>
  answer.kind === 'found' && answer.values.some((value) => /^v=DMARC1\s*(;|$)/i.test(value.trim()));

/** Found → verified; not found → `missing`; an unanswered lookup keeps what was known. */
const statusOf = (answer: DnsAnswer, found: boolean, known: RecordStatus, missing: RecordStatus): RecordStatus =>
  answer.kind === 'unavailable' ? known : found ? 'verified' : missing;

/**
 * The next check: pending (or a rotation or a receiving MX waiting) backs off; a sending domain is checked daily;
 * failed never.
 */
function nextCheck(status: DomainStatus, waiting: boolean, checks: number, now: number): number | null {
  if (status === 'failed') return null;
  if (status === 'pending' || waiting) return now + Math.min(FIRST_RETRY_MS * 2 ** Math.min(checks, 12), LAST_RETRY_MS);
  return now + DAILY_MS;
}

/** The newest verified selector signs; older verified ones retire after the overlap. */
function retireReplaced(selectors: DkimSelector[], now: number): DkimSelector[] {
  const current = selectors.filter((s) => s.status === 'verified').at(-1);
  return selectors.map((s) =>
    s !== current && s.status === 'verified' && s.retiresAt === null
      ? { ...s, retiresAt: now + ROTATION_OVERLAP_MS }
      : s,
  );
}

/** The domain after a look at DNS, or `unavailable` when the resolver did not answer for DKIM. */
export async function checkDomain(
  domain: Domain,
  config: DomainsConfig,
  lookup: Lookup,
  now = Date.now(),
): Promise<{ kind: 'checked'; domain: Domain } | { kind: 'unavailable'; domain: Domain }> {
  const returnPath = returnPathName(config, domain.name);
  const listed = listedSelectors(domain, now);
  const inboundMx = domain.inboundName && config.inboundMx ? config.inboundMx : null;
  const [dkim, mx, spf, dmarc, inbound] = await Promise.all([
    Promise.all(listed.map((s) => lookup(dkimName(s.selector, domain.name), 'TXT'))),
    config.returnPathMx ? lookup(returnPath, 'MX') : null,
    config.returnPathMx && config.spfInclude ? lookup(returnPath, 'TXT') : null,
    lookup(`_dmarc.${domain.name}`, 'TXT'),
    inboundMx ? lookup(domain.inboundName!, 'MX') : null,
  ]);
  const at = nowIso(new Date(now));
  if (dkim.some((answer) => answer.kind === 'unavailable')) {
    return { kind: 'unavailable', domain: { ...domain, nextCheckAt: now + UNAVAILABLE_RETRY_MS } };
  }
  const selectors = retireReplaced(
    listed.map((s, i): DkimSelector => {
      const found = hasDkimKey(dkim[i]!, s.publicKey);
      if (found) return { ...s, status: 'verified', verifiedAt: s.verifiedAt ?? at };
      // A record that was there and is gone has failed; one never seen is still pending.
      return { ...s, status: s.status === 'verified' || s.status === 'failed' ? 'failed' : 'pending' };
    }),
    now,
  );
  const returnPathStatus = mx
    ? statusOf(mx, hasMx(mx, config.returnPathMx!), domain.returnPathStatus, 'pending')
    : 'pending';
  const spfStatus = spf
    ? statusOf(spf, hasSpfInclude(spf, config.spfInclude!), domain.spfStatus, 'pending')
    : 'pending';
  const returnPathFound = returnPathStatus === 'verified' && (spf === null || spfStatus === 'verified');
  const signs = selectors.some((s) => s.status === 'verified');
  const held = domain.status === 'verified' || domain.status === 'partially_verified';
  const status: DomainStatus = signs
    ? returnPathFound
      ? 'verified'
      : 'partially_verified'
    : held || now - Date.parse(domain.createdAt) >= PENDING_LIMIT_MS
      ? 'failed'
      : 'pending';
  const inboundStatus =
    inbound && inboundMx ? statusOf(inbound, hasMx(inbound, inboundMx), domain.inboundStatus, 'pending') : 'pending';
  const waiting = selectors.some((s) => s.status === 'pending') || (inbound !== null && inboundStatus === 'pending');
  const checks = domain.checks + 1;
  return {
    kind: 'checked',
    domain: {
      ...domain,
      status,
      returnPathStatus,
      spfStatus,
      dmarcStatus: statusOf(dmarc, hasDmarc(dmarc), domain.dmarcStatus, 'pending'),
      inboundStatus,
      checks,
      nextCheckAt: nextCheck(status, waiting, checks, now),
      checkedAt: at,
      verifiedAt: signs ? (held ? domain.verifiedAt : at) : domain.verifiedAt,
      selectors: [...selectors, ...domain.selectors.filter((s) => !listed.includes(s))],
    },
  };
}
