// Worker vars and secrets parsed by one schema (src/config.ts): unset or empty → the default, present
// but invalid → an error naming the variable, one parse per env object.
import { createMessageBatch } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { config, defaultSender, otpPepper, requireRoutes, variableProblems } from '../src/config';
import { ApiError } from '../src/errors';
import worker from '../src/index';
import { bucketRule } from '../src/middleware/rate-limit';
import type { MailJob } from '../src/queue/jobs';
import { expectError, fetchWith, newAccount, uniqueAddress } from './support/api';

/** An env object with only these vars (no bindings: config reads vars and secrets only). */
const vars = (values: Record<string, string | undefined>) => ({ ...values }) as unknown as Cloudflare.Env;

/** The relay of the one SMTP route the SMTP_* variables make, or null when they make none. */
const smtpConfig = (values: Cloudflare.Env) => {
  const [route] = config(values).routes;
  return route?.kind === 'smtp' ? route.smtp : null;
};

const DEFAULTS = {
  routes: [],
  sender: { email: 'no-reply@postcode.invalid', name: null },
  limits: {
    mailPerKey: 120,
    mailPerIp: 240,
    readPerCredential: 600,
    otpSendPerCredential: 60,
    otpSendPerRecipient: 5,
    otpSendPerRecipientDay: 20,
    otpBackoffSeconds: 30,
    otpFailsPerRecipient: 20,
    signInPerIp: 30,
    signInPerAddress: 5,
  },
  otp: {
    maxAttempts: 5,
    pepper: null,
    sendWaitMs: 3_000,
    turnstileVerifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  },
  retry: { baseSeconds: 10, maxAttempts: 6 },
  outbox: { graceSeconds: 30 },
  webhooks: { allowInsecure: false, disableAfterDays: 5 },
  retention: { days: 30 },
  publicBaseUrl: null,
  adminToken: null,
  domains: {
    keySecret: null,
    resolverUrl: 'https://cloudflare-dns.com/dns-query',
    returnPathSubdomain: 'pc-bounces',
    returnPathMx: null,
    spfInclude: null,
    inboundMx: null,
    globalReturnPath: null,
  },
  feedback: { feedbackLocalPart: 'fbl', hardBounceDays: 30 },
  inbound: { domain: null, maxBytes: 26_214_400, perAccountPerMinute: 120 },
};

const ALL_VARS = [
  'SMTP_HOST',
  'SMTP_PORT',
  'SMTP_SECURE',
  'SMTP_USERNAME',
  'SMTP_PASSWORD',
  'SMTP_EHLO_NAME',
  'MAIL_FROM',
  'PUBLIC_BASE_URL',
  'ADMIN_TOKEN',
  'OTP_PEPPER',
  'RATE_MAIL_PER_KEY',
  'RATE_MAIL_PER_IP',
  'RATE_READ_PER_CREDENTIAL',
  'RATE_OTP_SEND_PER_CREDENTIAL',
  'RATE_OTP_SEND_PER_RECIPIENT',
  'RATE_OTP_SEND_PER_RECIPIENT_DAY',
  'RATE_OTP_BACKOFF_SECONDS',
  'RATE_OTP_FAILS_PER_RECIPIENT',
  'RATE_SIGNIN_PER_IP',
  'RATE_SIGNIN_PER_ADDRESS',
  'OTP_MAX_ATTEMPTS',
  'MAIL_RETRY_BASE_SECONDS',
  'MAIL_MAX_ATTEMPTS',
  'OUTBOX_GRACE_SECONDS',
  'OTP_SEND_WAIT_MS',
  'TURNSTILE_VERIFY_URL',
  'WEBHOOK_ALLOW_INSECURE',
  'WEBHOOK_DISABLE_AFTER_DAYS',
  'RETENTION_DAYS',
  'DKIM_KEY_SECRET',
  'DNS_RESOLVER_URL',
  'RETURN_PATH_SUBDOMAIN',
  'RETURN_PATH_MX',
  'SPF_INCLUDE',
  'RETURN_PATH_DOMAIN',
  'INBOUND_DOMAIN',
  'INBOUND_MX',
  'INBOUND_MAX_BYTES',
  'INBOUND_RATE_PER_ACCOUNT',
];

/** The error thrown for these vars: a plain Error (500 at the first request), never an ApiError. */
function configError(values: Record<string, string>): Error {
  let thrown: unknown;
  try {
    config(vars(values));
  } catch (error) {
    thrown = error;
  }
  expect(thrown, JSON.stringify(values)).toBeInstanceOf(Error);
  expect(thrown).not.toBeInstanceOf(ApiError);
  return thrown as Error;
}

describe('config: unset and empty values', () => {
  it('every var unset → the defaults (SMTP off, admin API and pepper unset)', () => {
    expect(config(vars({}))).toEqual(DEFAULTS);
  });

  it('every var empty or blank → the same defaults, never 0', () => {
    expect(config(vars(Object.fromEntries(ALL_VARS.map((name) => [name, ''] as const))))).toEqual(DEFAULTS);
    expect(config(vars(Object.fromEntries(ALL_VARS.map((name) => [name, '  '] as const))))).toMatchObject({
      routes: [],
      limits: DEFAULTS.limits,
      otp: { maxAttempts: 5 },
      retry: { baseSeconds: 10 },
    });
  });

  it('the SMTP port defaults by security: tls 465, starttls 587, none 25; security defaults to starttls', () => {
    const portOf = (SMTP_SECURE?: string) => smtpConfig(vars({ SMTP_HOST: 'smtp.example.com', SMTP_SECURE }))!;
    expect(portOf('tls')).toMatchObject({ security: 'tls', port: 465 });
    expect(portOf('starttls')).toMatchObject({ security: 'starttls', port: 587 });
    expect(portOf('none')).toMatchObject({ security: 'none', port: 25 });
    expect(portOf(undefined)).toMatchObject({ security: 'starttls', port: 587 });
    expect(portOf('')).toMatchObject({ security: 'starttls', port: 587, timeoutMs: 15_000, credentials: undefined });
  });

  it('the EHLO name defaults to the domain of MAIL_FROM (of the default sender without one)', () => {
    const ehloOf = (more: Record<string, string>) => smtpConfig(vars({ SMTP_HOST: 'smtp.example.com', ...more }))!;
    expect(ehloOf({ MAIL_FROM: 'Shop <orders@shop.example.com>' }).ehloName).toBe('shop.example.com');
    expect(ehloOf({}).ehloName).toBe('postcode.invalid');
    expect(ehloOf({ SMTP_EHLO_NAME: ' ' }).ehloName).toBe('postcode.invalid');
  });

  it('no route when SMTP_HOST is empty, whatever else is set: requireRoutes answers 503 SMTP_NOT_CONFIGURED', () => {
    const noHost = vars({ SMTP_HOST: ' ', SMTP_PORT: '2525', SMTP_SECURE: 'tls', SMTP_USERNAME: 'user' });
    expect(smtpConfig(noHost)).toBeNull();
    let thrown: unknown;
    try {
      requireRoutes(noHost);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ code: 'SMTP_NOT_CONFIGURED', status: 503 });
  });

  it('a missing OTP_PEPPER fails only the accessor, naming the variable', () => {
    expect(config(vars({})).otp.pepper).toBeNull();
    expect(() => otpPepper(vars({ OTP_PEPPER: '' }))).toThrow(/OTP_PEPPER/);
    expect(otpPepper(vars({ OTP_PEPPER: ' pepper ' }))).toBe(' pepper ');
  });
});

describe('config: valid values', () => {
  it('parses every group', () => {
    const parsed = config(
      vars({
        SMTP_HOST: ' smtp.example.com ',
        SMTP_PORT: '2525',
        SMTP_SECURE: 'tls',
        SMTP_USERNAME: ' mailer ',
        SMTP_PASSWORD: ' secret ',
        SMTP_EHLO_NAME: 'mta-1.example.net',
        MAIL_FROM: 'Example Mail <mail@example.com>',
        PUBLIC_BASE_URL: 'https://verify.example.com',
        ADMIN_TOKEN: 'admin',
        OTP_PEPPER: 'pepper',
        RATE_MAIL_PER_KEY: '1',
        RATE_MAIL_PER_IP: '2',
        RATE_READ_PER_CREDENTIAL: '3',
        RATE_OTP_SEND_PER_CREDENTIAL: '4',
        RATE_OTP_SEND_PER_RECIPIENT: '0',
        RATE_OTP_SEND_PER_RECIPIENT_DAY: '7',
        RATE_OTP_BACKOFF_SECONDS: '0',
        RATE_OTP_FAILS_PER_RECIPIENT: ' 6 ',
        RATE_SIGNIN_PER_IP: '7',
        RATE_SIGNIN_PER_ADDRESS: '8',
        OTP_MAX_ATTEMPTS: '3',
        MAIL_RETRY_BASE_SECONDS: '0',
        MAIL_MAX_ATTEMPTS: '3',
        OUTBOX_GRACE_SECONDS: '60',
        OTP_SEND_WAIT_MS: '1500',
        TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_DISABLE_AFTER_DAYS: '2',
        RETENTION_DAYS: '90',
        DKIM_KEY_SECRET: ' dkim ',
        DNS_RESOLVER_URL: 'https://dns.google/resolve',
        RETURN_PATH_SUBDOMAIN: 'Bounces',
        RETURN_PATH_MX: 'MX.Postcode.Example',
        SPF_INCLUDE: '_spf.relay.example',
        RETURN_PATH_DOMAIN: 'bounces.postcode.example',
        INBOUND_DOMAIN: 'Inbound.Postcode.Example',
        INBOUND_MX: 'Route1.MX.Example',
        INBOUND_MAX_BYTES: '1048576',
        INBOUND_RATE_PER_ACCOUNT: '30',
      }),
    );
    expect(parsed).toEqual({
      routes: [
        {
          name: 'smtp',
          kind: 'smtp',
          smtp: {
            host: 'smtp.example.com',
            port: 2525,
            security: 'tls',
            credentials: { username: 'mailer', password: ' secret ' },
            ehloName: 'mta-1.example.net',
            timeoutMs: 15_000,
          },
        },
      ],
      sender: { email: 'mail@example.com', name: 'Example Mail' },
      limits: {
        mailPerKey: 1,
        mailPerIp: 2,
        readPerCredential: 3,
        otpSendPerCredential: 4,
        otpSendPerRecipient: 0,
        otpSendPerRecipientDay: 7,
        otpBackoffSeconds: 0,
        otpFailsPerRecipient: 6,
        signInPerIp: 7,
        signInPerAddress: 8,
      },
      otp: { maxAttempts: 3, pepper: 'pepper', sendWaitMs: 1500, turnstileVerifyUrl: 'http://127.0.0.1:9/siteverify' },
      retry: { baseSeconds: 0, maxAttempts: 3 },
      outbox: { graceSeconds: 60 },
      webhooks: { allowInsecure: true, disableAfterDays: 2 },
      retention: { days: 90 },
      publicBaseUrl: 'https://verify.example.com',
      adminToken: 'admin',
      domains: {
        keySecret: ' dkim ',
        resolverUrl: 'https://dns.google/resolve',
        returnPathSubdomain: 'bounces',
        returnPathMx: 'mx.postcode.example',
        spfInclude: '_spf.relay.example',
        inboundMx: 'route1.mx.example',
        globalReturnPath: 'bounces.postcode.example',
      },
      feedback: { feedbackLocalPart: 'fbl', hardBounceDays: 30 },
      inbound: { domain: 'inbound.postcode.example', maxBytes: 1_048_576, perAccountPerMinute: 30 },
    });
  });

  it('MAIL_FROM: `Name <addr>`, a quoted name, or a bare address', () => {
    const sender = (MAIL_FROM: string) => defaultSender(vars({ MAIL_FROM }));
    expect(sender('postcode <no-reply@postcode.dev>')).toEqual({ email: 'no-reply@postcode.dev', name: 'postcode' });
    expect(sender('"Post Code" <a@example.com>')).toEqual({ email: 'a@example.com', name: 'Post Code' });
    expect(sender(' a@example.com ')).toEqual({ email: 'a@example.com', name: null });
    expect(sender('<a@example.com>')).toEqual({ email: 'a@example.com', name: null });
  });

  it('RETENTION_DAYS = 0 is a value (keep everything), not the default', () => {
    expect(config(vars({ RETENTION_DAYS: '0' })).retention).toEqual({ days: 0 });
  });

  it('the rate-limit buckets read their limits from the config', () => {
    expect(bucketRule(vars({ RATE_MAIL_PER_KEY: '7' }), 'mail-key')).toEqual({ limit: 7, windowSeconds: 60 });
    expect(bucketRule(vars({}), 'otp-fails-recipient')).toEqual({ limit: 20, windowSeconds: 3600 });
  });

  it("the test worker's own env parses", () => {
    expect(smtpConfig(env)).toMatchObject({ host: '127.0.0.1', security: 'none' });
    expect(config(env).retry).toMatchObject({ baseSeconds: 0 });
  });
});

describe('config: present but invalid values throw, naming the variable', () => {
  it.each([
    ['RATE_MAIL_PER_KEY', 'abc', 'expected a whole number >= 0'],
    ['RATE_MAIL_PER_KEY', '-1', 'expected a whole number >= 0'],
    ['RATE_MAIL_PER_IP', '1.5', 'expected a whole number >= 0'],
    ['RATE_READ_PER_CREDENTIAL', '1e3', 'expected a whole number >= 0'],
    ['RATE_OTP_SEND_PER_CREDENTIAL', '0x10', 'expected a whole number >= 0'],
    ['RATE_OTP_SEND_PER_RECIPIENT', 'five', 'expected a whole number >= 0'],
    ['RATE_OTP_SEND_PER_RECIPIENT_DAY', '-1', 'expected a whole number >= 0'],
    ['RATE_OTP_FAILS_PER_RECIPIENT', 'NaN', 'expected a whole number >= 0'],
    ['OTP_MAX_ATTEMPTS', '0', 'expected a whole number >= 1'],
    ['MAIL_RETRY_BASE_SECONDS', '-5', 'expected a whole number >= 0'],
    ['MAIL_MAX_ATTEMPTS', '0', 'expected a whole number >= 1 and <= 20'],
    ['OUTBOX_GRACE_SECONDS', '61', 'expected a whole number >= 0 and <= 60'],
    ['RATE_OTP_BACKOFF_SECONDS', '86401', 'expected a whole number >= 0 and <= 86400'],
    ['OTP_SEND_WAIT_MS', '50', 'expected a whole number >= 100 and <= 60000'],
    ['WEBHOOK_ALLOW_INSECURE', 'yes', 'expected true or false'],
    ['WEBHOOK_DISABLE_AFTER_DAYS', '0', 'expected a whole number >= 1 and <= 365'],
    ['RETENTION_DAYS', '-1', 'expected a whole number >= 0 and <= 3650'],
    ['RETENTION_DAYS', '3651', 'expected a whole number >= 0 and <= 3650'],
    ['RETENTION_DAYS', '30d', 'expected a whole number >= 0 and <= 3650'],
    ['SMTP_PORT', '0', 'expected a whole number >= 1 and <= 65535'],
    ['SMTP_PORT', '65536', 'expected a whole number >= 1 and <= 65535'],
    ['SMTP_SECURE', 'ssl', 'expected one of tls, starttls, none'],
    ['SMTP_EHLO_NAME', 'mail example.com', 'expected a host name such as mail.example.com'],
    ['SMTP_EHLO_NAME', '-mail.example.com', 'expected a host name such as mail.example.com'],
    ['MAIL_FROM', 'postcode', 'expected an address or `Name <address>`'],
    ['MAIL_FROM', 'Bad "Name" <a@example.com>', 'expected an address or `Name <address>`'],
    ['PUBLIC_BASE_URL', 'verify.example.com', 'expected an absolute http(s) URL'],
    ['PUBLIC_BASE_URL', 'ftp://verify.example.com', 'expected an absolute http(s) URL'],
    ['DNS_RESOLVER_URL', 'dns.google', 'expected an absolute http(s) URL'],
    ['TURNSTILE_VERIFY_URL', 'ftp://siteverify.example', 'expected an absolute http(s) URL'],
    ['RETURN_PATH_SUBDOMAIN', 'pc.bounces', 'expected one DNS label such as pc-bounces'],
    ['RETURN_PATH_MX', 'mx example.com', 'expected a host name such as mail.example.com'],
    ['SPF_INCLUDE', '_spf relay', 'expected a domain such as _spf.relay.example'],
    ['RETURN_PATH_DOMAIN', 'bounces.example.com', 'needs DKIM_KEY_SECRET, which keys the return path tokens'],
  ])('%s = %j', (name, value, expected) => {
    expect(configError({ [name]: value }).message).toBe(`Invalid configuration: ${name}: ${expected}`);
  });

  it.each([
    ['not JSON', '[{', 'MAIL_ROUTES: expected a JSON array of routes'],
    ['an empty list', '[]', 'MAIL_ROUTES: expected at least one route'],
    [
      'an unknown kind',
      '[{"name":"x","kind":"ses"}]',
      'MAIL_ROUTES.0.kind: expected a route with kind smtp or cloudflare',
    ],
    [
      'a bad name',
      '[{"name":"a b","kind":"smtp","host":"h.example"}]',
      'MAIL_ROUTES.0.name: expected a name of 1-32 letters, digits, _ or -',
    ],
    [
      'a repeated name',
      '[{"name":"a","kind":"smtp","host":"h.example"},{"name":"a","kind":"smtp","host":"i.example"}]',
      'MAIL_ROUTES: route names must be unique',
    ],
    [
      'a bad host',
      '[{"name":"a","kind":"smtp","host":"mail example.com"}]',
      'MAIL_ROUTES.0.host: expected a host name such as mail.example.com',
    ],
    [
      'a bad secure',
      '[{"name":"a","kind":"smtp","host":"h.example","secure":"ssl"}]',
      'MAIL_ROUTES.0.secure: expected one of tls, starttls, none',
    ],
    [
      'an unknown field',
      '[{"name":"a","kind":"smtp","host":"h.example","password":"x"}]',
      'MAIL_ROUTES.0: Unrecognized key: "password"',
    ],
    [
      'a secret that is not set',
      '[{"name":"a","kind":"smtp","host":"h.example","passwordSecret":"RELAY_A"}]',
      'MAIL_ROUTES.0.passwordSecret: a: the secret RELAY_A is not set',
    ],
  ])('MAIL_ROUTES with %s', (_, value, expected) => {
    expect(configError({ MAIL_ROUTES: value }).message).toBe(`Invalid configuration: ${expected}`);
  });

  it('MAIL_ROUTES: relays with the password from the secret each names, Cloudflare with its binding; SMTP_* ignored', () => {
    const routes = [
      { name: 'primary', kind: 'smtp', host: 'smtp.example.com', username: 'u', passwordSecret: 'PRIMARY_PASSWORD' },
      { name: 'backup', kind: 'smtp', host: 'backup.example.com', port: 2525, secure: 'tls' },
      { name: 'cf', kind: 'cloudflare' },
    ];
    const parsed = config({
      ...vars({ MAIL_ROUTES: JSON.stringify(routes), SMTP_HOST: 'ignored.example.com', PRIMARY_PASSWORD: ' pw ' }),
      EMAIL: {},
    } as unknown as Cloudflare.Env);
    expect(parsed.routes).toEqual([
      {
        name: 'primary',
        kind: 'smtp',
        smtp: {
          host: 'smtp.example.com',
          port: 587,
          security: 'starttls',
          credentials: { username: 'u', password: ' pw ' },
          ehloName: 'postcode.invalid',
          timeoutMs: 15_000,
        },
      },
      {
        name: 'backup',
        kind: 'smtp',
        smtp: {
          host: 'backup.example.com',
          port: 2525,
          security: 'tls',
          credentials: undefined,
          ehloName: 'postcode.invalid',
          timeoutMs: 15_000,
        },
      },
      { name: 'cf', kind: 'cloudflare' },
    ]);
    expect(configError({ MAIL_ROUTES: '[{"name":"cf","kind":"cloudflare"}]' }).message).toBe(
      'Invalid configuration: MAIL_ROUTES: cf: needs the send_email binding EMAIL',
    );
  });

  it.each([
    ['FEEDBACK_ADDRESS', 'fbl@example.com', 'expected the local part of an address, such as fbl'],
    ['SUPPRESS_HARD_BOUNCE_DAYS', '-1', 'expected a whole number >= 0 and <= 3650'],
  ])('%s = %j', (name, value, expected) => {
    expect(configError({ [name]: value }).message).toBe(`Invalid configuration: ${name}: ${expected}`);
  });

  it('an invalid SMTP var fails even while SMTP_HOST is empty (one rule for every var)', () => {
    expect(configError({ SMTP_HOST: '', SMTP_SECURE: 'ssl' }).message).toMatch(/^Invalid configuration: SMTP_SECURE: /);
  });

  it('names every invalid variable at once', () => {
    expect(configError({ RATE_MAIL_PER_KEY: 'abc', SMTP_PORT: '0', OTP_MAX_ATTEMPTS: '2' }).message).toBe(
      'Invalid configuration: SMTP_PORT: expected a whole number >= 1 and <= 65535; ' +
        'RATE_MAIL_PER_KEY: expected a whole number >= 0',
    );
  });
});

describe('config: one parse per env object', () => {
  it('the same object gets the same Config instance; another object gets its own parse', () => {
    const a = vars({ RATE_MAIL_PER_KEY: '2' });
    const first = config(a);
    expect(config(a)).toBe(first);
    expect(defaultSender(a)).toBe(first.sender);
    const b = vars({ RATE_MAIL_PER_KEY: '3' });
    expect(config(b)).not.toBe(first);
    expect(config(b).limits.mailPerKey).toBe(3);
    expect(config(a).limits.mailPerKey).toBe(2);
    expect(config(env)).toBe(config(env));
  });

  it('a failed parse is not cached: it throws on every use', () => {
    const bad = vars({ SMTP_SECURE: 'ssl' });
    expect(() => config(bad)).toThrow(/SMTP_SECURE/);
    expect(() => config(bad)).toThrow(/SMTP_SECURE/);
  });
});

describe('config: how invalid configuration surfaces', () => {
  it('a request that reads it answers 500 INTERNAL_ERROR', async () => {
    const { mailKey } = await newAccount();
    const res = await fetchWith({ RATE_MAIL_PER_KEY: 'abc' }, 'POST', '/api/v1/emails', {
      token: mailKey,
      body: { to: uniqueAddress('config'), subject: 'Config', text: 'hello' },
    });
    expectError(res, 500, 'INTERNAL_ERROR');
  });

  it('a queue batch fails as a whole (the queue retries it) without acking anything', async () => {
    const batch = createMessageBatch<MailJob>('postcode-mail', [
      {
        id: 'config-0',
        timestamp: new Date(),
        attempts: 1,
        body: { kind: 'email', accountId: 'acc_config', emailId: 'em_config' },
      },
    ]);
    await expect(worker.queue(batch, { ...env, MAIL_RETRY_BASE_SECONDS: 'soon' })).rejects.toThrow(
      'Invalid configuration: MAIL_RETRY_BASE_SECONDS: expected a whole number >= 0',
    );
  });
});

describe('config: one variable at a time (npm start, before it reads the files)', () => {
  it('names each variable that breaks its own rule, whatever the others hold, and nothing it cannot judge alone', () => {
    expect(variableProblems({ RATE_MAIL_PER_KEY: 'abc', SMTP_PORT: '25', NOT_A_VARIABLE: 'x' })).toEqual([
      { variable: 'RATE_MAIL_PER_KEY', rule: 'expected a whole number >= 0' },
    ]);
    // ADMIN_TOKEN unset and the like are the whole configuration's problems, not one variable's.
    expect(variableProblems({ SMTP_PORT: '587' })).toEqual([]);
  });
});
