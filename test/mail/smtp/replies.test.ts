// Replies off the wire: where one ends, however the bytes arrived.
import { describe, expect, it } from 'vitest';
import { replyEnd } from '../../../src/mail/smtp/replies';
import { parseCapabilities } from '../../../src/mail/smtp/session';

describe('replyEnd', () => {
  it('finds the end of the first complete reply', () => {
    expect(replyEnd('250 ok\r\n354 go\r\n')).toBe(8);
    expect(replyEnd('250-one\r\n250-two\r\n250 three\r\n250 next\r\n')).toBe(29);
    expect(replyEnd('250 ok\n')).toBe(7);
  });

  it('returns -1 while the reply is incomplete', () => {
    expect(replyEnd('')).toBe(-1);
    expect(replyEnd('250 o')).toBe(-1);
    expect(replyEnd('250-one\r\n250-two\r\n')).toBe(-1);
  });
});

describe('parseCapabilities', () => {
  it('reads the extensions of an EHLO reply, AUTH in both spellings', () => {
    const ehlo =
      '250-mx.example.com Hello\r\n250-PIPELINING\r\n250-SIZE 35882577\r\n250-8BITMIME\r\n250-AUTH=LOGIN\r\n250-AUTH PLAIN LOGIN\r\n250-DSN\r\n250 STARTTLS\r\n';
    expect(parseCapabilities(ehlo)).toEqual({
      pipelining: true,
      startTls: true,
      auth: ['LOGIN', 'PLAIN', 'LOGIN'],
      size: 35882577,
      dsn: true,
    });
  });

  it('a bare greeting line offers nothing; SIZE 0 names no limit; the host name is not an extension', () => {
    expect(parseCapabilities('250 PIPELINING.example.com\r\n')).toEqual({
      pipelining: false,
      startTls: false,
      auth: [],
      size: null,
      dsn: false,
    });
    expect(parseCapabilities('250-mx\r\n250 SIZE 0\r\n').size).toBeNull();
  });
});
