// One-time code generation and storage hash (decisions.md "One-time codes"): uniform decimal digits with
// leading zeros kept, and HMAC-SHA256(OTP_PEPPER, sessionId + code) as 64 hex characters.
import { describe, expect, it } from 'vitest';
import { generateCode, hashCode } from '../../src/otp/codes';

describe('generateCode', () => {
  const COUNT = 2000;
  const codes = Array.from({ length: COUNT }, () => generateCode(6));

  it('gives 6 ASCII digits every time', () => {
    for (const code of codes) expect(code).toMatch(/^[0-9]{6}$/);
  });

  it('keeps leading zeros', () => {
    // About 10% of uniform codes start with 0 (≈200 of 2,000); none would if codes were numbers.
    const leadingZero = codes.filter((code) => code.startsWith('0')).length;
    expect(leadingZero).toBeGreaterThan(0);
  });

  it('uses all ten digits at every position', () => {
    for (let position = 0; position < 6; position++) {
      const seen = new Set(codes.map((code) => code[position]));
      expect([...seen].sort(), `position ${position}`).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    }
  });

  it('has uniform digit frequencies (chi-square over 12,000 digits, 9 d.f., below 27.88 = p 0.001)', () => {
    const counts = new Array<number>(10).fill(0);
    for (const code of codes) for (const digit of code) counts[Number(digit)]!++;
    const total = counts.reduce((a, b) => a + b, 0);
    expect(total).toBe(12_000);
    const expected = total / 10;
    const chiSquare = counts.reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
    expect(chiSquare, `digit counts ${counts.join(', ')}`).toBeLessThan(27.88);
  });

  it('gives exactly the asked number of digits for the bounds 4 and 10', () => {
    for (let i = 0; i < 200; i++) {
      expect(generateCode(4)).toMatch(/^[0-9]{4}$/);
      expect(generateCode(10)).toMatch(/^[0-9]{10}$/);
    }
  });

  it('does not repeat one code over and over', () => {
    expect(new Set(codes).size).toBeGreaterThan(1900);
  });
});

describe('hashCode', () => {
  const sessionA = 'otp_aaaaaaaaaaaaaaaaaaaaaaaaaa';
  const sessionB = 'otp_bbbbbbbbbbbbbbbbbbbbbbbbbb';

  it('is 64 lower-case hex characters', async () => {
    expect(await hashCode('pepper', sessionA, '123456')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is deterministic', async () => {
    expect(await hashCode('pepper', sessionA, '012345')).toBe(await hashCode('pepper', sessionA, '012345'));
  });

  it('differs by session id, by code and by pepper', async () => {
    const base = await hashCode('pepper', sessionA, '123456');
    expect(await hashCode('pepper', sessionB, '123456')).not.toBe(base);
    expect(await hashCode('pepper', sessionA, '123457')).not.toBe(base);
    expect(await hashCode('pepper', sessionA, '0123456')).not.toBe(base);
    expect(await hashCode('other-pepper', sessionA, '123456')).not.toBe(base);
  });

  it('is the HMAC-SHA256 of sessionId + code keyed with the pepper, not a plain hash of the code', async () => {
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode('pepper'),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${sessionA}123456`)));
    const hex = [...mac].map((b) => b.toString(16).padStart(2, '0')).join('');
    expect(await hashCode('pepper', sessionA, '123456')).toBe(hex);
    const plain = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('123456')));
    expect(await hashCode('pepper', sessionA, '123456')).not.toBe(
      [...plain].map((b) => b.toString(16).padStart(2, '0')).join(''),
    );
  });
});
