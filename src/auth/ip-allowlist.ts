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
