// A sending domain's name as an account gives it: a registrable-looking host name, in its one ASCII spelling
// (lower case, punycode, no final dot), or the reason it cannot be one.

export type DomainName = { ok: true; name: string } | { ok: false; reason: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function parseDomainName(input: string): DomainName {
  const trimmed = input.trim().replace(/\.$/, '');
  if (trimmed === '' || /[\s/:@?#[\]\\_\x00-\x1f\x7f]/.test(trimmed)) {
    return { ok: false, reason: 'expected a domain name (letters, digits, hyphens and dots)' };
  }
  let ascii: string;
  try {
    // The URL parser applies IDNA: `bücher.example` becomes `xn--bcher-kva.example`.
    ascii = new URL(`http://${trimmed}`).hostname;
  } catch {
    return { ok: false, reason: 'expected a domain name (letters, digits, hyphens and dots)' };
  }
  if (ascii.length > 253) return { ok: false, reason: 'a domain name has at most 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, reason: 'expected a domain with a dot, such as example.com' };
  if (labels.some((label) => label.length > 63)) return { ok: false, reason: 'a label has at most 63 characters' };
  if (!labels.every((label) => LABEL.test(label))) {
    return { ok: false, reason: 'each label is letters, digits and inner hyphens' };
  }
  // The URL parser reads `1.2.3.4` (and `0x7f.1`) as an address: a domain's last label is never all digits.
  if (/^[0-9]+$/.test(labels.at(-1)!) || /^\d+(\.\d+){3}$/.test(ascii)) {
    return { ok: false, reason: 'an IP address is not a domain' };
  }
  if (ascii === 'localhost' || ascii.endsWith('.localhost')) return { ok: false, reason: 'localhost is not a domain' };
  return { ok: true, name: ascii };
}
