// Mailbox validation: everything that can reach an SMTP command or a header.
import { describe, expect, it } from 'vitest';
import { canonicalAddress, checkAddress, isSafeDisplayName, uniqueAddresses } from '../../src/mail/address';

const accepted = (input: string) => {
  const result = checkAddress(input);
  expect(result, input).toMatchObject({ ok: true });
  return result.ok ? result.address : '';
};

const rejected = (input: string) => {
  const result = checkAddress(input);
  expect(result, JSON.stringify(input)).toMatchObject({ ok: false, reason: expect.any(String) });
};

/** A domain of exactly `length` characters made of valid labels, ending in `.com`. */
function domainOf(length: number): string {
  const labels: string[] = [];
  let remaining = length - '.com'.length;
  let letter = 0;
  while (remaining > 0) {
    const size = Math.min(63, remaining);
    labels.push(String.fromCharCode(97 + (letter++ % 26)).repeat(size));
    remaining -= size + 1; // the dot before the next label
  }
  const domain = `${labels.join('.')}.com`;
  // Adjust the last label when the dots made it overshoot.
  const overshoot = domain.length - length;
  const fixed = overshoot > 0 ? `${labels.slice(0, -1).concat(labels.at(-1)!.slice(overshoot)).join('.')}.com` : domain;
  expect(fixed.length).toBe(length);
  return fixed;
}

describe('checkAddress', () => {
  it('accepts ordinary addresses unchanged', () => {
    for (const address of [
      'user@example.com',
      'first.last+tag@sub.example.co.uk',
      "o'brien@example.com",
      'a@b.io',
      'x_y-z@my-domain.example',
      'user123@123.example.com',
    ]) {
      expect(accepted(address)).toBe(address);
    }
  });

  it('a local part of 64 characters is accepted, 65 is rejected', () => {
    const local64 = 'a'.repeat(64);
    expect(accepted(`${local64}@example.com`)).toBe(`${local64}@example.com`);
    rejected(`${'a'.repeat(65)}@example.com`);
  });

  it('254 characters in total are accepted, 255 and more are rejected', () => {
    const local = 'a'.repeat(64);
    const ok = `${local}@${domainOf(254 - 65)}`;
    expect(ok.length).toBe(254);
    expect(accepted(ok)).toBe(ok);
    const tooLong = `${local}@${domainOf(255 - 65)}`;
    expect(tooLong.length).toBe(255);
    rejected(tooLong);
    rejected(`${local}@${domainOf(300 - 65)}`);
  });

  it('rejects CR, LF and NUL anywhere', () => {
    for (const input of [
      'user@example.com\r\nBcc: victim@example.com',
      'user@example.com\n',
      'user@example.com\r',
      'us\ner@example.com',
      'user@exa\rmple.com',
      'user\0@example.com',
      'user@example.com\0',
    ]) {
      rejected(input);
    }
  });

  it('rejects angle brackets and whitespace outside quotes', () => {
    for (const input of [
      '<user@example.com>',
      'Name <user@example.com>',
      'us<er@example.com',
      'user>@example.com',
      'user@exam<ple.com',
      'us er@example.com',
      ' user@example.com',
      'user@example.com ',
      'user@ example.com',
      'user\t@example.com',
    ]) {
      rejected(input);
    }
  });

  it('accepts a quoted local part with a space (and brackets inside the quotes)', () => {
    expect(accepted('"john doe"@example.com')).toBe('"john doe"@example.com');
    expect(accepted('"a<b>c"@example.com')).toBe('"a<b>c"@example.com');
  });

  it('rejects broken quoting', () => {
    rejected('"john doe@example.com');
    rejected('john" "doe@example.com');
    rejected('"a"b"@example.com');
  });

  it('rejects a domain without a dot and other malformed domains', () => {
    for (const input of [
      'user@localhost',
      'user@example',
      'user@',
      'user@.example.com',
      'user@example..com',
      'user@example.com.',
      'user@-example.com',
      'user@exa_mple.com',
      'user@[127.0.0.1]',
      'user@127.0.0.1',
    ]) {
      rejected(input);
    }
  });

  it('rejects other malformed local parts', () => {
    for (const input of [
      '',
      'no-at-sign',
      '@example.com',
      '.user@example.com',
      'user.@example.com',
      'a..b@example.com',
      'a(b)@example.com',
      'a,b@example.com',
    ]) {
      rejected(input);
    }
  });

  it('turns an IDN domain into punycode', () => {
    expect(accepted('user@bücher.de')).toBe('user@xn--bcher-kva.de');
    expect(accepted('info@münchen.example.com')).toBe('info@xn--mnchen-3ya.example.com');
  });
});

describe('uniqueAddresses', () => {
  it('duplicates differing in case collapse to the first spelling, order kept', () => {
    expect(
      uniqueAddresses([
        'Ann@Example.com',
        'bob@example.com',
        'ann@example.com',
        'ANN@EXAMPLE.COM',
        'carol@example.com',
      ]),
    ).toEqual(['Ann@Example.com', 'bob@example.com', 'carol@example.com']);
  });

  it('leaves distinct addresses alone', () => {
    expect(uniqueAddresses(['a@example.com', 'a@example.org', 'b@example.com'])).toEqual([
      'a@example.com',
      'a@example.org',
      'b@example.com',
    ]);
    expect(uniqueAddresses([])).toEqual([]);
  });
});

describe('isSafeDisplayName', () => {
  it('accepts ordinary names, with accents, apostrophes and punctuation', () => {
    for (const name of ['Jane Doe', 'Bücher GmbH', "O'Brien & Sons", 'Support (EU), Team', '株式会社']) {
      expect(isSafeDisplayName(name), name).toBe(true);
    }
  });

  it('rejects line breaks, quotes, backslashes and control characters', () => {
    for (const name of [
      'Evil\r\nBcc: victim@example.com',
      'line\nbreak',
      'carriage\rreturn',
      'Say "hi"',
      '"',
      'back\\slash',
      'nul\0',
      'tab\there',
      'del\x7f',
    ]) {
      expect(isSafeDisplayName(name), JSON.stringify(name)).toBe(false);
    }
  });
});

describe('canonicalAddress', () => {
  it('one spelling per mailbox: unquoted when the plain form is valid, lower case, punycode domain', () => {
    for (const spelling of ['x@d.example', '"x"@d.example', '"\\x"@d.example', 'X@D.EXAMPLE', '"X"@d.Example']) {
      expect(canonicalAddress(spelling), spelling).toBe('x@d.example');
    }
    expect(canonicalAddress('first.last@bücher.example')).toBe('first.last@xn--bcher-kva.example');
  });

  it('keeps the quotes of a local part that needs them', () => {
    expect(canonicalAddress('"two words"@example.com')).toBe('"two words"@example.com');
    expect(canonicalAddress('"a..b"@example.com')).toBe('"a..b"@example.com');
  });

  it('uniqueAddresses drops other spellings of one mailbox, keeping the first as given', () => {
    expect(uniqueAddresses(['"Ann"@example.com', 'ann@example.com', '"\\ann"@EXAMPLE.com'])).toEqual([
      '"Ann"@example.com',
    ]);
  });
});
