// DNS lookups over DNS-over-HTTPS in its JSON form (`GET <resolver>?name=…&type=…`, `accept:
// application/dns-json`, as Cloudflare's and Google's public resolvers answer it): the records a domain
// publishes for DKIM, its return path and DMARC.

export type RecordType = 'TXT' | 'MX';

/** What a lookup found: the records' data (TXT strings joined, MX as `<priority> <host>`), none, or no answer. */
export type DnsAnswer =
  | { kind: 'found'; values: string[] }
  | { kind: 'none' }
  | { kind: 'unavailable'; reason: string };

const TYPE_NUMBER: Record<RecordType, number> = { TXT: 16, MX: 15 };

/** DNS's status codes that mean "no such record" rather than a failure: NOERROR with no answer, NXDOMAIN. */
const NO_RECORD = new Set([0, 3]);

const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * A TXT record's data as the JSON form gives it: one or more quoted strings of up to 255 bytes each (RFC 7208
 * 3.3), joined with nothing between them; `\"`, `\\` and `\DDD` escapes read. Data without quotes is kept as is.
 */
export function joinTxtData(data: string): string {
  const strings = data.match(/"(?:[^"\\]|\\.)*"/g);
  if (!strings) return data;
  return strings
    .map((quoted) =>
      quoted
        .slice(1, -1)
        .replace(/\\(\d{3}|.)/g, (_, escaped: string) =>
          /^\d{3}$/.test(escaped) ? String.fromCharCode(Number(escaped)) : escaped,
        ),
    )
    .join('');
}

type JsonAnswer = { Status?: unknown; Answer?: { type?: unknown; data?: unknown }[] };

/** The records of `type` at `name`; never throws (a resolver that fails or times out is `unavailable`). */
export async function lookup(resolverUrl: string, name: string, type: RecordType): Promise<DnsAnswer> {
  const url = new URL(resolverUrl);
  url.searchParams.set('name', name);
  url.searchParams.set('type', type);
  let body: JsonAnswer;
  try {
    const res = await fetch(url, {
      headers: { accept: 'application/dns-json' },
      signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS),
    });
    if (!res.ok) return { kind: 'unavailable', reason: `the resolver answered HTTP ${res.status}` };
    body = (await res.json()) as JsonAnswer;
  } catch (error) {
    return { kind: 'unavailable', reason: error instanceof Error ? error.message : String(error) };
  }
  if (typeof body.Status !== 'number') return { kind: 'unavailable', reason: 'the resolver gave no status' };
  if (!NO_RECORD.has(body.Status)) return { kind: 'unavailable', reason: `DNS status ${body.Status}` };
  // The answer may also hold the CNAMEs that led there: only the records of the type asked for count.
  const values = (body.Answer ?? [])
    .filter((record) => record.type === TYPE_NUMBER[type] && typeof record.data === 'string')
    .map((record) => (type === 'TXT' ? joinTxtData(record.data as string) : (record.data as string)));
  return values.length > 0 ? { kind: 'found', values } : { kind: 'none' };
}
