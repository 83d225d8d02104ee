// A token's send policy on its own (src/otp/send-policy.ts): which addresses it refuses, and the disposable-address
// list it reads (data/disposable-email-domains.txt). The routes' behaviour: test/routes/otp/send-policy.test.ts.
import { describe, expect, it } from 'vitest';
import disposableDomainList from '../../data/disposable-email-domains.txt';
import { addressRefusal, isDisposableDomain } from '../../src/otp/send-policy';
import { OPEN_POLICY } from '../../src/store/control/otp-tokens';

describe('the disposable-address list', () => {
  it('is one lower-case domain per line, sorted, without duplicates, and thousands long', () => {
    const lines = disposableDomainList.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(5000);
    for (const line of lines) expect(line).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
    expect(new Set(lines).size).toBe(lines.length);
    expect([...lines].sort()).toEqual(lines);
  });

  it('matches a listed domain and every domain below it, in any case or with a final dot; nothing else', () => {
    for (const domain of ['mailinator.com', 'MAILINATOR.com', 'inbox.mailinator.com', 'mailinator.com.']) {
      expect(isDisposableDomain(domain), domain).toBe(true);
    }
    for (const domain of ['gmail.com', 'example.com', 'mailinator.com.example.org', 'com', 'ailinator.com']) {
      expect(isDisposableDomain(domain), domain).toBe(false);
    }
  });
});

describe('addressRefusal', () => {
  const strict = { ...OPEN_POLICY, blockDisposable: true, blockSubaddresses: true };

  it('refuses sub-addresses, quoted or not, and disposable domains, saying which; the open policy refuses nothing', () => {
    expect(addressRefusal(strict, 'ada+news@example.com')).toContain('sub-addresses');
    expect(addressRefusal(strict, '"ada+news"@example.com')).toContain('sub-addresses');
    expect(addressRefusal(strict, 'ada@Mailinator.com')).toContain('disposable');
    expect(addressRefusal(strict, 'ada@example.com')).toBeNull();
    expect(addressRefusal(strict, 'ada-news@example.com')).toBeNull();
    for (const email of ['ada+news@example.com', 'ada@mailinator.com']) {
      expect(addressRefusal(OPEN_POLICY, email)).toBeNull();
    }
  });

  it('checks only what the policy turns on', () => {
    const subaddresses = { ...OPEN_POLICY, blockSubaddresses: true };
    expect(addressRefusal(subaddresses, 'ada@mailinator.com')).toBeNull();
    const disposable = { ...OPEN_POLICY, blockDisposable: true };
    expect(addressRefusal(disposable, 'ada+x@example.com')).toBeNull();
  });
});
