// Mailbox validation for everything that reaches an SMTP command or a header.

const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Quoted local part: printable ASCII; quotes and backslashes only when escaped.
const QUOTED = /^"([\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

/** IDN domains become punycode (the URL parser implements UTS #46). */
function toAsciiDomain(domain: string): string | null {
  if (!/^[^\s/\\?#@:[\]%]+$/.test(domain)) return null;
  try {
    return new URL(`http://${domain}`).hostname;
  } catch {
    return null;
  }
}

/** Validates one address and returns it with an ASCII (punycode) domain. */
export function checkAddress(input: string): AddressCheck {
  if (/[\r\n\0]/.test(input)) return { ok: false, reason: 'must not contain line breaks' };
  if (input.length > 254) return { ok: false, reason: 'must be at most 254 characters' };
  const at = input.lastIndexOf('@');
  if (at < 1) return { ok: false, reason: 'expected an email address' };
  const local = input.slice(0, at);
  const domain = toAsciiDomain(input.slice(at + 1));
  if (local.length > 64) return { ok: false, reason: 'local part must be at most 64 characters' };
  if (!DOT_ATOM.test(local) && !QUOTED.test(local)) return { ok: false, reason: 'expected an email address' };
  if (!domain || domain.length > 253) return { ok: false, reason: 'expected an email address with a valid domain' };
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) {
    return { ok: false, reason: 'expected an email address with a valid domain' };
  }
  const address = `${local}@${domain}`;
  if (address.length > 254) return { ok: false, reason: 'must be at most 254 characters' };
  return { ok: true, address };
}

/**
 * The one spelling of a mailbox, for everything that counts or compares recipients (OTP limits, duplicate
 * removal, the suppression list): a quoted local part loses its quotes and escapes when the plain form is a
 * valid dot-atom (`"x"@d` and `"\\x"@d` are `x@d`), the domain is ASCII (punycode), and the whole address is
 * lower-cased (mailbox providers treat local parts case-insensitively in practice). The address as given is
 * still what is sent.
 */
export function canonicalAddress(address: string): string {
  const at = address.lastIndexOf('@');
  let local = address.slice(0, at);
  const domain = toAsciiDomain(address.slice(at + 1)) ?? address.slice(at + 1);
  if (QUOTED.test(local)) {
    const plain = local.slice(1, -1).replace(/\\(.)/g, '$1');
    if (DOT_ATOM.test(plain)) local = plain;
  }
  return `${local}@${domain}`.toLowerCase();
}

/** The domain of an address in its one spelling (ASCII, lower case): the name a sending domain is kept under. */
export function domainOf(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return (toAsciiDomain(domain) ?? domain).toLowerCase();
}

/** Duplicates (the same canonical mailbox) are sent once; the first spelling wins. */
export function uniqueAddresses(addresses: string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((address) => {
    const key = canonicalAddress(address);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Display names go into a quoted header word: no line breaks, quotes, backslashes or control characters. */
export function isSafeDisplayName(name: string): boolean {
  return name.length <= 200 && !/[\x00-\x1f\x7f"\\]/.test(name);
}

export type Mailbox = { email: string; name: string | null };

/** `Name <address>`, `"Name" <address>` or a bare address; null when the address or the name fails its check. */
export function parseMailbox(raw: string): Mailbox | null {
  const match = raw.match(/^(.*?)\s*<([^<>\s]+)>$/);
  const email = match ? match[2]! : raw;
  const name = match ? match[1]!.replace(/^"|"$/g, '') || null : null;
  if (!checkAddress(email).ok || (name !== null && !isSafeDisplayName(name))) return null;
  return { email, name };
}
