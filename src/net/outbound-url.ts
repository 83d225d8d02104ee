// Where postcode may post or fetch (webhook endpoints, attachment paths): https (http and loopback only
// when WEBHOOK_ALLOW_INSECURE is on, for local development), no credentials in the URL, at most 2,048
// characters, never a private, loopback or link-local IP literal, and in production never a name that only
// a local network resolves (a customer's URL must not reach into the network postcode runs in). A public name
// that resolves to a private address is Cloudflare's egress to stop: this check sees no DNS.
import { isIpAllowed, parseIp } from '../auth/ip-allowlist';

/** Private, loopback, link-local, shared, multicast and reserved ranges (IPv4-mapped IPv6 included). */
const BLOCKED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];
const LOOPBACK = ['127.0.0.0/8', '::1/128'];

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

export function checkOutboundUrl(input: string, allowInsecure: boolean): UrlCheck {
  if (input.length > 2048) return { ok: false, reason: 'must be at most 2048 characters' };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'expected an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) {
    return { ok: false, reason: allowInsecure ? 'expected an http(s) URL' : 'expected an https URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  // The URL parser has lowercased names and normalised IP literals (0x7f.1. is 127.0.0.1); IPv6 ones come in
  // brackets. A name's trailing dots name the same host (`localhost.` is localhost).
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (parseIp(host)) {
    if (!(allowInsecure && isIpAllowed(LOOPBACK, host)) && isIpAllowed(BLOCKED_RANGES, host)) {
      return { ok: false, reason: 'must not point at a private, loopback or link-local address' };
    }
  } else if (!allowInsecure && isLocalName(host.replace(/\.+$/, ''))) {
    return {
      ok: false,
      reason: 'must not name a local host (localhost, *.local, *.internal, *.home.arpa or a single label)',
    };
  }
  return { ok: true, url: url.toString() };
}

/** Names only a local network resolves: loopback, mDNS, private-use and home-network domains, bare host names. */
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'home.arpa'];
const isLocalName = (name: string) =>
  !name.includes('.') || LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
