// Sending domains' names (src/mail/domain-name.ts).
import { describe, expect, it } from 'vitest';
import { parseDomainName } from '../../src/mail/domain-name';

describe('parseDomainName', () => {
  it('keeps one spelling: lower case, punycode, no final dot', () => {
    expect(parseDomainName('Mail.Shop.Example')).toEqual({ ok: true, name: 'mail.shop.example' });
    expect(parseDomainName('shop.example.')).toEqual({ ok: true, name: 'shop.example' });
    expect(parseDomainName('bücher.example')).toEqual({ ok: true, name: 'xn--bcher-kva.example' });
    expect(parseDomainName(`${'a'.repeat(63)}.example`)).toMatchObject({ ok: true });
  });

  it.each([
    ['', 'expected a domain name'],
    ['1.2.3.4', 'an IP address is not a domain'],
    ['0x7f.1', 'an IP address is not a domain'],
    ['[::1]', 'expected a domain name'],
    ['localhost', 'expected a domain with a dot'],
    ['mail.localhost', 'localhost is not a domain'],
    ['under_score.example', 'expected a domain name'],
    ['_dmarc.example', 'expected a domain name'],
    [`${'a'.repeat(64)}.example`, 'a label has at most 63 characters'],
    [`${'abcdefghi.'.repeat(25)}example`, 'a domain name has at most 253 characters'],
    ['-shop.example', 'each label is letters, digits and inner hyphens'],
    ['shop..example', 'each label is letters, digits and inner hyphens'],
    ['shop.example/path', 'expected a domain name'],
    ['user@shop.example', 'expected a domain name'],
    ['shop', 'expected a domain with a dot'],
  ])('refuses %j: %s', (input, reason) => {
    const parsed = parseDomainName(input);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });
});
