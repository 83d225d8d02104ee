// Inbound route patterns: what parses, and which route an address takes (exact, then sub-address, then any).
import { describe, expect, it } from 'vitest';
import { matchRoute, parsePattern, specificity } from '../../src/inbound/patterns';

describe('parsePattern', () => {
  it('takes an exact address, its sub-addresses and any, lower-cased', () => {
    expect(parsePattern('Support@Acme.Inbound.Example')).toEqual({
      localPart: 'support',
      domain: 'acme.inbound.example',
    });
    expect(parsePattern('support+*@acme.inbound.example')).toEqual({
      localPart: 'support+*',
      domain: 'acme.inbound.example',
    });
    expect(parsePattern('*@acme.inbound.example')).toEqual({ localPart: '*', domain: 'acme.inbound.example' });
    expect(parsePattern("o'brien.j@x.example")).toEqual({ localPart: "o'brien.j", domain: 'x.example' });
  });

  it('refuses what is no pattern', () => {
    for (const pattern of [
      'support',
      '@acme.example',
      'support@',
      'sup*port@acme.example',
      '*+*@acme.example',
      'support+x*@acme.example',
      'support+tag@acme.example',
      '.support@acme.example',
      'sup..port@acme.example',
      'sup port@acme.example',
      `${'a'.repeat(65)}@acme.example`,
    ]) {
      expect(parsePattern(pattern), pattern).toHaveProperty('error');
    }
  });

  it('orders patterns by how specific they are', () => {
    expect(['*', 'support+*', 'support'].map(specificity)).toEqual([2, 1, 0]);
  });
});

describe('matchRoute', () => {
  const routes = [
    { localPart: '*', name: 'any' },
    { localPart: 'support+*', name: 'sub' },
    { localPart: 'support', name: 'exact' },
  ];
  const take = (address: string, from = routes) => matchRoute(from, address)?.name ?? null;

  it('the most specific pattern wins, whatever the order of the routes', () => {
    expect(take('support@acme.example')).toBe('exact');
    expect(take('Support@ACME.example')).toBe('exact');
    expect(take('support+billing@acme.example')).toBe('sub');
    expect(take('SUPPORT+Billing@acme.example')).toBe('sub');
    expect(take('sales@acme.example')).toBe('any');
    expect(take('support+billing@acme.example', [...routes].reverse())).toBe('sub');
  });

  it('a sub-address pattern does not match the bare address; exact does not match a sub-address', () => {
    const sub = [{ localPart: 'support+*', name: 'sub' }];
    expect(take('support@acme.example', sub)).toBeNull();
    expect(take('support+x@acme.example', [{ localPart: 'support', name: 'exact' }])).toBeNull();
  });

  it('no route matches: null (the mail is refused; nothing is implicit)', () => {
    expect(take('sales@acme.example', [{ localPart: 'support', name: 'exact' }])).toBeNull();
    expect(take('anyone@acme.example', [])).toBeNull();
  });
});
