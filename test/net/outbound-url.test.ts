// Where postcode may post or fetch (webhook URLs, attachment paths): the rules on the URL itself.
import { describe, expect, it } from 'vitest';
import { checkOutboundUrl } from '../../src/net/outbound-url';

const NOT_PUBLIC = 'must not point at a private, loopback or link-local address';
const LOCAL_NAME = 'must not name a local host (localhost, *.local, *.internal, *.home.arpa or a single label)';

describe('checkOutboundUrl', () => {
  it('accepts a public https URL, as the URL parser writes it', () => {
    expect(checkOutboundUrl('https://Hooks.Example.com:443/a/../x', false)).toEqual({
      ok: true,
      url: 'https://hooks.example.com/x',
    });
    // A trailing dot is the same public name.
    expect(checkOutboundUrl('https://hooks.example.com./x', false).ok).toBe(true);
  });

  it('refuses local names in production, whatever their case or trailing dots', () => {
    for (const url of [
      'https://localhost/x',
      'https://LocalHost.:8443/x',
      'https://localhost../x',
      'https://api.localhost./x',
      'https://printer.local/x',
      'https://PRINTER.LOCAL./x',
      'https://metadata.google.internal/x',
      'https://db.internal./x',
      'https://nas.home.arpa/x',
      'https://nas.Home.Arpa./x',
      'https://intranet/x',
      'https://intranet./x',
    ]) {
      expect(checkOutboundUrl(url, false), url).toEqual({ ok: false, reason: LOCAL_NAME });
    }
  });

  it('refuses private and loopback IP literals, trailing dot or not', () => {
    for (const url of ['https://127.0.0.1./x', 'https://0x7f.1./x', 'https://10.0.0.1/x', 'https://[::1]/x']) {
      expect(checkOutboundUrl(url, false), url).toEqual({ ok: false, reason: NOT_PUBLIC });
    }
  });

  it('allows http and loopback under WEBHOOK_ALLOW_INSECURE (local development), never private ranges', () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost./x',
      'http://LocalHost.:8080/x',
      'http://receiver/x',
    ]) {
      expect(checkOutboundUrl(url, true).ok, url).toBe(true);
    }
    expect(checkOutboundUrl('http://10.0.0.1/x', true)).toEqual({ ok: false, reason: NOT_PUBLIC });
    expect(checkOutboundUrl('http://10.0.0.1./x', true)).toEqual({ ok: false, reason: NOT_PUBLIC });
  });
});
