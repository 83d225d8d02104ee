// IP allowlists of public OTP tokens: addresses and CIDR ranges, IPv4 and IPv6.
import { describe, expect, it } from 'vitest';
import { isIpAllowed, parseIpRange } from '../../src/auth/ip-allowlist';

describe('isIpAllowed', () => {
  it('an empty list allows every client, even one without a usable address', () => {
    for (const client of ['203.0.113.7', '2001:db8::1', undefined, '', 'garbage']) {
      expect(isIpAllowed([], client)).toBe(true);
    }
  });

  describe('IPv4', () => {
    it('an exact address matches only itself', () => {
      expect(isIpAllowed(['203.0.113.7'], '203.0.113.7')).toBe(true);
      expect(isIpAllowed(['203.0.113.7'], '203.0.113.8')).toBe(false);
      expect(isIpAllowed(['203.0.113.7'], '203.0.113.70')).toBe(false);
      expect(isIpAllowed(['203.0.113.7'], '3.0.113.7')).toBe(false);
    });

    it('/32 is a single address', () => {
      expect(isIpAllowed(['203.0.113.7/32'], '203.0.113.7')).toBe(true);
      expect(isIpAllowed(['203.0.113.7/32'], '203.0.113.6')).toBe(false);
    });

    it('/8 covers the first octet', () => {
      for (const client of ['10.0.0.0', '10.0.0.1', '10.1.2.3', '10.255.255.255']) {
        expect(isIpAllowed(['10.0.0.0/8'], client), client).toBe(true);
      }
      for (const client of ['9.255.255.255', '11.0.0.0', '110.0.0.1', '1.10.0.0']) {
        expect(isIpAllowed(['10.0.0.0/8'], client), client).toBe(false);
      }
    });

    it('/24 and /31 cut at the right bit', () => {
      expect(isIpAllowed(['192.168.1.0/24'], '192.168.1.255')).toBe(true);
      expect(isIpAllowed(['192.168.1.0/24'], '192.168.2.0')).toBe(false);
      expect(isIpAllowed(['192.168.1.2/31'], '192.168.1.3')).toBe(true);
      expect(isIpAllowed(['192.168.1.2/31'], '192.168.1.4')).toBe(false);
    });

    it('/0 covers every IPv4 address, and no IPv6 one', () => {
      for (const client of ['0.0.0.0', '1.2.3.4', '255.255.255.255']) {
        expect(isIpAllowed(['0.0.0.0/0'], client), client).toBe(true);
      }
      expect(isIpAllowed(['0.0.0.0/0'], '2001:db8::1')).toBe(false);
    });

    it('any matching entry of a list is enough', () => {
      const list = ['198.51.100.1', '10.0.0.0/8'];
      expect(isIpAllowed(list, '198.51.100.1')).toBe(true);
      expect(isIpAllowed(list, '10.9.9.9')).toBe(true);
      expect(isIpAllowed(list, '198.51.100.2')).toBe(false);
    });
  });

  describe('IPv6', () => {
    it('an exact address matches itself in any spelling', () => {
      const list = ['2001:db8::1'];
      for (const client of [
        '2001:db8::1',
        '2001:0db8:0000:0000:0000:0000:0000:0001',
        '2001:DB8::1',
        '2001:db8:0:0::1',
      ]) {
        expect(isIpAllowed(list, client), client).toBe(true);
      }
      for (const client of ['2001:db8::2', '2001:db8::1:0', '2001:db9::1']) {
        expect(isIpAllowed(list, client), client).toBe(false);
      }
    });

    it('compressed `::` entries expand correctly', () => {
      expect(isIpAllowed(['::1'], '0:0:0:0:0:0:0:1')).toBe(true);
      expect(isIpAllowed(['::1'], '1::')).toBe(false);
      expect(isIpAllowed(['fe80::'], 'fe80:0:0:0:0:0:0:0')).toBe(true);
      expect(isIpAllowed(['1:2::7:8'], '1:2:0:0:0:0:7:8')).toBe(true);
      expect(isIpAllowed(['1:2::7:8'], '1:2:0:0:0:7:8:0')).toBe(false);
      expect(isIpAllowed(['0:0:0:0:0:0:0:1'], '::1')).toBe(true);
    });

    it('/64 covers the interface half only', () => {
      const list = ['2001:db8:1:2::/64'];
      for (const client of ['2001:db8:1:2::', '2001:db8:1:2::5', '2001:db8:1:2:ffff:ffff:ffff:ffff']) {
        expect(isIpAllowed(list, client), client).toBe(true);
      }
      for (const client of ['2001:db8:1:3::', '2001:db8:1:1:ffff:ffff:ffff:ffff', '2001:db8::1']) {
        expect(isIpAllowed(list, client), client).toBe(false);
      }
    });

    it('/128 is a single address', () => {
      expect(isIpAllowed(['2001:db8::1/128'], '2001:db8::1')).toBe(true);
      expect(isIpAllowed(['2001:db8::1/128'], '2001:db8::2')).toBe(false);
      expect(isIpAllowed(['2001:db8::1/128'], '2001:db8::1:1')).toBe(false);
    });

    it('/32 and ::/0', () => {
      expect(isIpAllowed(['2001:db8::/32'], '2001:db8:ffff:ffff::1')).toBe(true);
      expect(isIpAllowed(['2001:db8::/32'], '2001:db9::1')).toBe(false);
      expect(isIpAllowed(['::/0'], 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(true);
    });

    it('an IPv6 entry does not match an IPv4 client', () => {
      expect(isIpAllowed(['2001:db8::/32'], '32.1.13.184')).toBe(false);
    });
  });

  describe('IPv4-mapped IPv6', () => {
    it('a mapped client (::ffff:a.b.c.d) is its IPv4 address', () => {
      expect(isIpAllowed(['10.0.0.0/8'], '::ffff:10.1.2.3')).toBe(true);
      expect(isIpAllowed(['10.0.0.0/8'], '::FFFF:10.1.2.3')).toBe(true);
      expect(isIpAllowed(['10.0.0.0/8'], '::ffff:a01:203')).toBe(true);
      expect(isIpAllowed(['10.1.2.3'], '::ffff:10.1.2.3')).toBe(true);
      expect(isIpAllowed(['10.0.0.0/8'], '::ffff:11.1.2.3')).toBe(false);
    });

    it('only the ::ffff:0:0/96 prefix is mapped', () => {
      expect(isIpAllowed(['10.0.0.0/8'], '::10.1.2.3')).toBe(false);
      expect(isIpAllowed(['10.0.0.0/8'], '64:ff9b::10.1.2.3')).toBe(false);
    });

    it('a mapped entry matches the plain IPv4 client', () => {
      expect(isIpAllowed(['::ffff:203.0.113.7'], '203.0.113.7')).toBe(true);
      expect(isIpAllowed(['::ffff:203.0.113.7'], '203.0.113.8')).toBe(false);
    });
  });

  describe('unusable client address', () => {
    it('a missing, empty or garbage client address never matches a non-empty list', () => {
      const lists = [['0.0.0.0/0'], ['::/0'], ['0.0.0.0/0', '::/0'], ['10.0.0.0/8']];
      const clients = [
        undefined,
        '',
        ' ',
        'garbage',
        '10.1.2',
        '10.1.2.3.4',
        '256.1.1.1',
        '10.1.2.3/8',
        '::1::2',
        'unknown',
        '10.1.2.3, 10.1.2.4',
      ];
      for (const list of lists) {
        for (const client of clients) {
          expect(isIpAllowed(list, client), `${JSON.stringify(client)} vs ${list.join(',')}`).toBe(false);
        }
      }
    });

    it('a malformed entry in a list matches nothing, the valid ones still work', () => {
      expect(isIpAllowed(['not-an-ip'], '10.1.1.1')).toBe(false);
      expect(isIpAllowed(['10.0.0.0/33'], '10.1.1.1')).toBe(false);
      expect(isIpAllowed(['not-an-ip', '10.0.0.0/8'], '10.1.1.1')).toBe(true);
    });
  });
});

describe('parseIpRange', () => {
  it('parses addresses as full-length ranges and keeps a given prefix', () => {
    expect(parseIpRange('1.2.3.4')).toMatchObject({ version: 4, prefix: 32 });
    expect(parseIpRange('10.0.0.0/8')).toMatchObject({ version: 4, prefix: 8 });
    expect(parseIpRange('0.0.0.0/0')).toMatchObject({ version: 4, prefix: 0 });
    expect(parseIpRange('255.255.255.255/32')).toMatchObject({ version: 4, prefix: 32 });
    expect(parseIpRange('::1')).toMatchObject({ version: 6, prefix: 128 });
    expect(parseIpRange('::')).toMatchObject({ version: 6, prefix: 128 });
    expect(parseIpRange('fe80::/10')).toMatchObject({ version: 6, prefix: 10 });
    expect(parseIpRange('2001:db8::/64')).toMatchObject({ version: 6, prefix: 64 });
    expect(parseIpRange('::/0')).toMatchObject({ version: 6, prefix: 0 });
    expect(parseIpRange('1:2:3:4:5:6:7:8/128')).toMatchObject({ version: 6, prefix: 128 });
    expect(parseIpRange('::ffff:1.2.3.4')).toMatchObject({ version: 6, prefix: 128 });
  });

  it('reads the address bits correctly', () => {
    expect(parseIpRange('1.2.3.4')?.base).toBe(0x01020304n);
    expect(parseIpRange('::1')?.base).toBe(1n);
    expect(parseIpRange('1::')?.base).toBe(1n << 112n);
    expect(parseIpRange('::ffff:1.2.3.4')?.base).toBe(0xffff01020304n);
  });

  it.each([
    ['leading zeros', '01.2.3.4'],
    ['leading zeros in a later octet', '1.2.03.4'],
    ['three octets', '1.2.3'],
    ['five octets', '1.2.3.4.5'],
    ['an octet over 255', '256.0.0.0'],
    ['a negative octet', '1.2.3.-4'],
    ['hex octets', '0x1.2.3.4'],
    ['an empty octet', '1..3.4'],
    ['two `::`', '::1::2'],
    ['nine groups', '1:2:3:4:5:6:7:8:9'],
    ['eight groups plus `::`', '1:2:3:4:5:6:7:8::'],
    ['seven groups without `::`', '1:2:3:4:5:6:7'],
    ['a group over four hex digits', '12345::'],
    ['a non-hex group', 'g::1'],
    ['a triple colon', '1:::2'],
    ['an IPv4 tail too many', '1:2:3:4:5:6:7:1.2.3.4'],
    ['a bad IPv4 tail', '::ffff:1.2.3.256'],
    ['an IPv4 prefix over 32', '1.2.3.4/33'],
    ['an IPv6 prefix over 128', 'fe80::/129'],
    ['an empty prefix', '1.2.3.4/'],
    ['a negative prefix', '1.2.3.4/-1'],
    ['a non-numeric prefix', '1.2.3.4/a'],
    ['two prefixes', '1.2.3.4/8/8'],
    ['a prefix without an address', '/8'],
    ['an empty entry', ''],
    ['a hostname', 'example.com'],
    ['a zone id', 'fe80::1%eth0'],
  ])('rejects %s (%s)', (_what, entry) => {
    expect(parseIpRange(entry)).toBeNull();
  });
});
