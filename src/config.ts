// The Worker's vars and secrets, parsed by one schema into typed settings. Every default lives here.
// One rule for every variable: unset or empty (after trimming) → the default; present but invalid →
// an error naming the variable, never a silent 0 or fallback.
import { z } from 'zod';
import { hostName, type MailRoute, routeList, routesOf, securityEnum } from './config-routes';
import type { Bindings } from './env';
import { ApiError } from './errors';
import { type Mailbox, parseMailbox } from './mail/address';

export type { MailRoute, SmtpConfig, SmtpSecurity } from './config-routes';
export type { Mailbox };

/** The settings, by group. */
export type Config = {
  /**
   * The delivery routes in order: MAIL_ROUTES, else one SMTP route from SMTP_HOST and the other SMTP_*
   * variables; empty when neither is set (sending routes answer 503 SMTP_NOT_CONFIGURED).
   */
  routes: MailRoute[];
  /** The sender of mail that names none (MAIL_FROM). */
  sender: Mailbox;
  /** Hits per window of each rate-limit bucket (the windows are in src/middleware/rate-limit.ts). */
  limits: {
    mailPerKey: number;
    mailPerIp: number;
    readPerCredential: number;
    otpSendPerCredential: number;
    otpSendPerRecipient: number;
    otpSendPerRecipientDay: number;
    /** RATE_OTP_BACKOFF_SECONDS: the first doubling wait after a recipient's second unverified code (0: none). */
    otpBackoffSeconds: number;
    otpFailsPerRecipient: number;
    signInPerIp: number;
    signInPerAddress: number;
  };
  /** `pepper` is null when OTP_PEPPER is unset: only OTP operations fail then (see `otpPepper`). */
  /** `sendWaitMs`: how long an OTP send waits for its SMTP exchange before answering `sent: false`. */
  otp: {
    maxAttempts: number;
    pepper: string | null;
    sendWaitMs: number;
    /** TURNSTILE_VERIFY_URL: Siteverify, where a public token's bot check is validated. */
    turnstileVerifyUrl: string;
  };
  /**
   * First delay after a transient SMTP failure (later ones grow 3×, see the queue consumer), and the
   * attempts an email gets before it is FAILED.
   */
  retry: { baseSeconds: number; maxAttempts: number };
  /** How long a QUEUED email may go without a delivery in progress before the account alarm queues it again. */
  outbox: { graceSeconds: number };
  /**
   * `allowInsecure`: http and loopback webhook URLs are accepted (local development only).
   * `disableAfterDays`: an endpoint that failed every delivery for this long is disabled.
   */
  webhooks: { allowInsecure: boolean; disableAfterDays: number };
  /** Days a finished email, a settled webhook delivery and OTP history are kept; 0 keeps them for good. */
  retention: { days: number };
  /** Origin of the hosted verify page; null when unset. */
  publicBaseUrl: string | null;
  /** Null when unset: the admin API is hidden (404). */
  adminToken: string | null;
  /** Sending domains: their DKIM keys' sealing secret, the DNS resolver, and the return path's names. */
  domains: DomainsConfig;
  /** What comes back after the relay: where feedback loops report, and how long a hard bounce suppresses. */
  feedback: FeedbackConfig;
  /**
   * INBOUND_DOMAIN: every account receives at `<its slug>.<domain>` (null: no receiving subdomains);
   * INBOUND_MAX_BYTES: a larger message is refused; INBOUND_RATE_PER_ACCOUNT: messages an account takes in a
   * minute (0: no limit).
   */
  inbound: { domain: string | null; maxBytes: number; perAccountPerMinute: number };
};

export type FeedbackConfig = {
  /** FEEDBACK_ADDRESS: the local part (on a return path domain) mailbox providers send complaints to. */
  feedbackLocalPart: string;
  /** SUPPRESS_HARD_BOUNCE_DAYS: a hard bounce keeps the address suppressed this long (0: for good). */
  hardBounceDays: number;
};

export type DomainsConfig = {
  /** DKIM_KEY_SECRET: seals private keys and keys the return path's tokens; null: domain routes fail (500). */
  keySecret: string | null;
  /** A DNS-over-HTTPS resolver answering the JSON form. */
  resolverUrl: string;
  /** `<subdomain>.<domain>` is a verified domain's envelope domain (RETURN_PATH_SUBDOMAIN). */
  returnPathSubdomain: string;
  /** The MX host the return path's subdomain points at; null: no return path records (partially verified at most). */
  returnPathMx: string | null;
  /** The relay's SPF include for the return path's TXT record; null: no SPF record is asked for. */
  spfInclude: string | null;
  /**
   * The MX host a customer's own receiving domain points at (INBOUND_MX, else RETURN_PATH_MX: a host that already
   * hands mail to the Worker); null: receiving on customers' own domains is off.
   */
  inboundMx: string | null;
  /** The envelope domain of mail not on a verified domain; null: the sender's own address. */
  globalReturnPath: string | null;
};
export type RateLimits = Config['limits'];

const DEFAULT_SENDER: Mailbox = { email: 'no-reply@postcode.invalid', name: null };

/**
 * Unset, or empty after trimming, is "not configured": the schema's default applies. A number (a
 * TOML var written without quotes) is read as its text.
 */
function blank(value: unknown) {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value.trim() || undefined : value;
}
/** Secrets are taken as written (a password may start or end with a space); only empty is unset. */
const emptySecret = (value: unknown) => (value === '' ? undefined : value);

function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  const message = `expected a whole number >= ${min}${max < Number.MAX_SAFE_INTEGER ? ` and <= ${max}` : ''}`;
  return z
    .string({ error: message })
    .regex(/^\d{1,15}$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message);
}

const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blank, schema.optional());
const withDefault = <T extends z.ZodType>(schema: T, value: z.output<T>) =>
  z.preprocess(
    blank,
    schema.optional().transform((v): z.output<T> => v ?? value),
  );

/** `Name <addr>` or a bare address; the address and display name pass the same checks as a sender's. */
const mailbox = z.string().transform((raw, ctx): Mailbox => {
  const parsed = parseMailbox(raw);
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: 'expected an address or `Name <address>`' });
    return z.NEVER;
  }
  return parsed;
});

const booleanText = z.enum(['true', 'false'], { error: 'expected true or false' }).transform((v) => v === 'true');

const httpUrl = z.string().refine((raw) => {
  try {
    return ['http:', 'https:'].includes(new URL(raw).protocol);
  } catch {
    return false;
  }
}, 'expected an absolute http(s) URL');

const DEFAULT_DNS_RESOLVER = 'https://cloudflare-dns.com/dns-query';
const DEFAULT_TURNSTILE_VERIFY = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

/** One DNS label (RETURN_PATH_SUBDOMAIN): letters, digits and inner hyphens, lower-cased. */
const dnsLabel = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, { error: 'expected one DNS label such as pc-bounces' })
  .transform((label) => label.toLowerCase());

const lowerHostName = hostName.transform((name) => name.toLowerCase());

/** An SPF include's domain: like a host name, and labels may start with an underscore (`_spf.example.com`). */
const spfDomain = z
  .string()
  .regex(/^_?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\._?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, {
    error: 'expected a domain such as _spf.relay.example',
  })
  .transform((name) => name.toLowerCase());

const schema = z
  .object({
    SMTP_HOST: optional(z.string()),
    SMTP_PORT: optional(wholeNumber(1, 65_535)),
    MAIL_ROUTES: optional(routeList),
    SMTP_SECURE: withDefault(securityEnum, 'starttls'),
    SMTP_USERNAME: optional(z.string()),
    SMTP_PASSWORD: z.preprocess(emptySecret, z.string().optional()),
    SMTP_EHLO_NAME: optional(hostName),
    MAIL_FROM: withDefault(mailbox, DEFAULT_SENDER),
    PUBLIC_BASE_URL: optional(httpUrl),
    ADMIN_TOKEN: z.preprocess(emptySecret, z.string().optional()),
    OTP_PEPPER: z.preprocess(emptySecret, z.string().optional()),
    RATE_MAIL_PER_KEY: withDefault(wholeNumber(0), 120),
    RATE_MAIL_PER_IP: withDefault(wholeNumber(0), 240),
    RATE_READ_PER_CREDENTIAL: withDefault(wholeNumber(0), 600),
    RATE_OTP_SEND_PER_CREDENTIAL: withDefault(wholeNumber(0), 60),
    RATE_OTP_SEND_PER_RECIPIENT: withDefault(wholeNumber(0), 5),
    RATE_OTP_SEND_PER_RECIPIENT_DAY: withDefault(wholeNumber(0), 20),
    RATE_OTP_BACKOFF_SECONDS: withDefault(wholeNumber(0, 86_400), 30),
    RATE_OTP_FAILS_PER_RECIPIENT: withDefault(wholeNumber(0), 20),
    RATE_SIGNIN_PER_IP: withDefault(wholeNumber(0), 30),
    RATE_SIGNIN_PER_ADDRESS: withDefault(wholeNumber(0), 5),
    OTP_MAX_ATTEMPTS: withDefault(wholeNumber(1), 5),
    MAIL_RETRY_BASE_SECONDS: withDefault(wholeNumber(0), 10),
    MAIL_MAX_ATTEMPTS: withDefault(wholeNumber(1, 20), 6),
    OUTBOX_GRACE_SECONDS: withDefault(wholeNumber(0, 60), 30),
    OTP_SEND_WAIT_MS: withDefault(wholeNumber(100, 60_000), 3_000),
    TURNSTILE_VERIFY_URL: withDefault(httpUrl, DEFAULT_TURNSTILE_VERIFY),
    WEBHOOK_ALLOW_INSECURE: withDefault(booleanText, false),
    WEBHOOK_DISABLE_AFTER_DAYS: withDefault(wholeNumber(1, 365), 5),
    RETENTION_DAYS: withDefault(wholeNumber(0, 3650), 30),
    DKIM_KEY_SECRET: z.preprocess(emptySecret, z.string().optional()),
    DNS_RESOLVER_URL: withDefault(httpUrl, DEFAULT_DNS_RESOLVER),
    RETURN_PATH_SUBDOMAIN: withDefault(dnsLabel, 'pc-bounces'),
    RETURN_PATH_MX: optional(lowerHostName),
    SPF_INCLUDE: optional(spfDomain),
    RETURN_PATH_DOMAIN: optional(lowerHostName),
    INBOUND_DOMAIN: optional(lowerHostName),
    INBOUND_MX: optional(lowerHostName),
    INBOUND_MAX_BYTES: withDefault(wholeNumber(1_024, 26_214_400), 26_214_400),
    INBOUND_RATE_PER_ACCOUNT: withDefault(wholeNumber(0), 120),
    FEEDBACK_ADDRESS: withDefault(
      z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'expected the local part of an address, such as fbl' }),
      'fbl',
    ),
    SUPPRESS_HARD_BOUNCE_DAYS: withDefault(wholeNumber(0, 3650), 30),
  })
  // Other keys are kept: a route's password is the secret MAIL_ROUTES names.
  .loose()
  .superRefine((vars, ctx) => {
    for (const [index, route] of (vars.MAIL_ROUTES ?? []).entries()) {
      if (route.kind === 'cloudflare' && !(vars as Record<string, unknown>).EMAIL) {
        ctx.addIssue({
          code: 'custom',
          path: ['MAIL_ROUTES'],
          message: `${route.name}: needs the send_email binding EMAIL`,
        });
      }
      const secret = route.kind === 'smtp' ? route.passwordSecret : undefined;
      if (secret && typeof (vars as Record<string, unknown>)[secret] !== 'string') {
        ctx.addIssue({
          code: 'custom',
          path: ['MAIL_ROUTES', index, 'passwordSecret'],
          message: `${route.name}: the secret ${secret} is not set`,
        });
      }
    }
  })
  // The return path's tokens carry a MAC keyed by DKIM_KEY_SECRET.
  .refine((vars) => !vars.RETURN_PATH_DOMAIN || vars.DKIM_KEY_SECRET, {
    message: 'needs DKIM_KEY_SECRET, which keys the return path tokens',
    path: ['RETURN_PATH_DOMAIN'],
  })
  .transform(
    (vars): Config => ({
      routes: routesOf(vars, vars),
      sender: vars.MAIL_FROM,
      limits: {
        mailPerKey: vars.RATE_MAIL_PER_KEY,
        mailPerIp: vars.RATE_MAIL_PER_IP,
        readPerCredential: vars.RATE_READ_PER_CREDENTIAL,
        otpSendPerCredential: vars.RATE_OTP_SEND_PER_CREDENTIAL,
        otpSendPerRecipient: vars.RATE_OTP_SEND_PER_RECIPIENT,
        otpSendPerRecipientDay: vars.RATE_OTP_SEND_PER_RECIPIENT_DAY,
        otpBackoffSeconds: vars.RATE_OTP_BACKOFF_SECONDS,
        otpFailsPerRecipient: vars.RATE_OTP_FAILS_PER_RECIPIENT,
        signInPerIp: vars.RATE_SIGNIN_PER_IP,
        signInPerAddress: vars.RATE_SIGNIN_PER_ADDRESS,
      },
      otp: {
        maxAttempts: vars.OTP_MAX_ATTEMPTS,
        pepper: vars.OTP_PEPPER ?? null,
        sendWaitMs: vars.OTP_SEND_WAIT_MS,
        turnstileVerifyUrl: vars.TURNSTILE_VERIFY_URL,
      },
      retry: { baseSeconds: vars.MAIL_RETRY_BASE_SECONDS, maxAttempts: vars.MAIL_MAX_ATTEMPTS },
      outbox: { graceSeconds: vars.OUTBOX_GRACE_SECONDS },
      webhooks: { allowInsecure: vars.WEBHOOK_ALLOW_INSECURE, disableAfterDays: vars.WEBHOOK_DISABLE_AFTER_DAYS },
      retention: { days: vars.RETENTION_DAYS },
      publicBaseUrl: vars.PUBLIC_BASE_URL ?? null,
      adminToken: vars.ADMIN_TOKEN ?? null,
      domains: {
        keySecret: vars.DKIM_KEY_SECRET ?? null,
        resolverUrl: vars.DNS_RESOLVER_URL,
        returnPathSubdomain: vars.RETURN_PATH_SUBDOMAIN,
        returnPathMx: vars.RETURN_PATH_MX ?? null,
        spfInclude: vars.SPF_INCLUDE ?? null,
        inboundMx: vars.INBOUND_MX ?? vars.RETURN_PATH_MX ?? null,
        globalReturnPath: vars.RETURN_PATH_DOMAIN ?? null,
      },
      inbound: {
        domain: vars.INBOUND_DOMAIN ?? null,
        maxBytes: vars.INBOUND_MAX_BYTES,
        perAccountPerMinute: vars.INBOUND_RATE_PER_ACCOUNT,
      },
      feedback: {
        feedbackLocalPart: vars.FEEDBACK_ADDRESS.toLowerCase(),
        hardBounceDays: vars.SUPPRESS_HARD_BOUNCE_DAYS,
      },
    }),
  );

/** The variables the Worker reads. */
export const CONFIG_VARIABLES = Object.keys(schema.in.shape);

/** A variable that breaks its rule. */
export type ConfigProblem = { variable: string; rule: string };

const problemsOf = (error: z.ZodError): ConfigProblem[] =>
  error.issues.map((issue) => ({ variable: issue.path.join('.'), rule: issue.message }));

/**
 * Every variable of `vars` that breaks its rule, none for a valid configuration. `npm start` runs it
 * (scripts/start-config.mjs) before it starts anything.
 */
export function configProblems(vars: object): ConfigProblem[] {
  const result = schema.safeParse(vars);
  return result.success ? [] : problemsOf(result.error);
}

/**
 * The variables of `vars` that break their own rule, each read alone: a problem here is one whatever the other
 * variables hold, so `npm start` can name it before it reads the rest (rules across variables: `configProblems`).
 */
export function variableProblems(vars: Record<string, unknown>): ConfigProblem[] {
  const shape = schema.in.shape as Record<string, z.ZodType>;
  return Object.entries(vars).flatMap(([name, value]) => {
    const result = shape[name]?.safeParse(value);
    if (!result || result.success) return [];
    return result.error.issues.map((issue) => ({ variable: [name, ...issue.path].join('.'), rule: issue.message }));
  });
}

const parsed = new WeakMap<object, Config>();

/**
 * The settings of this env object, parsed on first use and cached per object (tests run the app
 * with env objects of their own). Invalid configuration throws a plain Error naming every bad
 * variable, at the first request or queue batch that reads the configuration. It is
 * deliberately not an ApiError: the app's onError logs it and answers 500 INTERNAL_ERROR, and a
 * queue batch fails and is retried, so a misconfigured deploy is loud instead of half-working.
 * Nothing is cached for a failed parse: the error is thrown again on every use.
 */
export function config(env: Bindings): Config {
  let settings = parsed.get(env);
  if (!settings) {
    const result = schema.safeParse(env);
    if (!result.success) {
      const problems = problemsOf(result.error).map(({ variable, rule }) => `${variable}: ${rule}`);
      throw new Error(`Invalid configuration: ${problems.join('; ')}`);
    }
    settings = result.data;
    parsed.set(env, settings);
  }
  return settings;
}

/** The HMAC key of stored OTP codes; throws (500) when unset, so only OTP operations fail without it. */
export function otpPepper(env: Bindings): string {
  const pepper = config(env).otp.pepper;
  if (pepper === null) throw new Error('Invalid configuration: OTP_PEPPER is not set (needed by the OTP routes)');
  return pepper;
}

/** DKIM_KEY_SECRET; throws (500) when unset, so only what needs it (domains, return path tokens) fails. */
export function dkimKeySecret(env: Bindings): string {
  const secret = config(env).domains.keySecret;
  if (secret === null) throw new Error('Invalid configuration: DKIM_KEY_SECRET is not set (needed by sending domains)');
  return secret;
}

/** The delivery routes; 503 SMTP_NOT_CONFIGURED when none is configured. */
export function requireRoutes(env: Bindings): MailRoute[] {
  const { routes } = config(env);
  if (routes.length === 0) throw new ApiError('SMTP_NOT_CONFIGURED', 'Outbound SMTP is not configured on this service');
  return routes;
}

/** `MAIL_FROM` as `Name <addr>` or a bare address. */
export function defaultSender(env: Bindings): Mailbox {
  return config(env).sender;
}
