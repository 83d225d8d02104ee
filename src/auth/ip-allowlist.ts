// IP allowlists of public OTP tokens: IPv4/IPv6 addresses and CIDR ranges, compared as integers.

type ParsedIp = { version: 4 | 6; value: bigint };
type IpRange = { version: 4 | 6; base: bigint; prefix: number };

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  let head = text;
  let tailV4: bigint | null = null;
  // An embedded IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = head.lastIndexOf(':');
  if (head.includes('.')) {
    tailV4 = parseIpv4(head.slice(lastColon + 1));
    if (tailV4 === null) return null;
    head = `${head.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':'));
  const left = parse(halves[0]!);
  const right = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  if (tailV4 !== null) value = (value & ~0xffffffffn) | tailV4;
  return value;
}

export function parseIp(text: string): ParsedIp | null {
  if (text.length > 64) return null;
  if (text.includes(':')) {
    const value = parseIpv6(text);
    return value === null ? null : { version: 6, value };
  }
  const value = parseIpv4(text);
  return value === null ? null : { version: 4, value };
}

// What parseIpRange accepts, as one pattern for the document: an IPv4 address (no leading zeros) or an IPv6
// address (RFC 3986's grammar, an IPv4 tail included), each with an optional prefix of at most 32 or 128.
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** `(?:h16:){0,n-1}h16`: the groups before a `::`, at most n. */
const before = (n: number) => `(?:(?:${H16}:){0,${n - 1}}${H16})?`;
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `${before(1)}::(?:${H16}:){4}${LS32}`,
  `${before(2)}::(?:${H16}:){3}${LS32}`,
  `${before(3)}::(?:${H16}:){2}${LS32}`,
  `${before(4)}::${H16}:${LS32}`,
  `${before(5)}::${LS32}`,
  `${before(6)}::${H16}`,
  `${before(7)}::`,
].join('|');
export const IP_RANGE_PATTERN = `^(?:${IPV4}(?:/(?:0?0?\\d|0?[12]\\d|0?3[0-2]))?|(?:${IPV6})(?:/(?:\\d{1,2}|0\\d\\d|1[01]\\d|12[0-8]))?)$`;

/** Parses `addr` or `addr/prefix`; null when malformed. */
export function parseIpRange(entry: string): IpRange | null {
  const [address, prefixText, ...rest] = entry.trim().split('/');
  if (rest.length > 0 || address === undefined) return null;
  const ip = parseIp(address);
  if (!ip) return null;
  const bits = ip.version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return null;
  return { version: ip.version, base: ip.value, prefix };
}

function toComparable(ip: ParsedIp): ParsedIp {
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address.
  if (ip.version === 6 && ip.value >> 32n === 0xffffn) return { version: 4, value: ip.value & 0xffffffffn };
  return ip;
}

function contains(range: IpRange, ip: ParsedIp): boolean {
  if (range.version !== ip.version) return false;
  const bits = BigInt(range.version === 4 ? 32 : 128);
  const shift = bits - BigInt(range.prefix);
  return range.base >> shift === ip.value >> shift;
}

/** Empty allowlist = any address. A missing or unparsable client address never matches a non-empty list. */
export function isIpAllowed(allowlist: string[], clientIp: string | undefined): boolean {
  if (allowlist.length === 0) return true;
  const parsed = clientIp ? parseIp(clientIp.trim()) : null;
  if (!parsed) return false;
  const ip = toComparable(parsed);
  return allowlist.some((entry) => {
    const range = parseIpRange(entry);
    if (!range) return false;
    const comparable =
      range.version === 6 && range.prefix >= 96 && range.base >> 32n === 0xffffn
        ? { version: 4 as const, base: range.base & 0xffffffffn, prefix: range.prefix - 96 }
        : range;
    return contains(comparable, ip);
  });
}
