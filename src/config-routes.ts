// The delivery routes' settings: SMTP relays (SMTP_* or MAIL_ROUTES) and Cloudflare Email Service. Part of the
// one configuration schema (src/config.ts), kept apart because the routes are a schema of their own.
import { z } from 'zod';
import type { Mailbox } from './mail/address';

export type SmtpSecurity = 'tls' | 'starttls' | 'none';

export type SmtpConfig = {
  host: string;
  port: number;
  security: SmtpSecurity;
  credentials?: { username: string; password: string };
  /** The name postcode gives in EHLO/HELO: SMTP_EHLO_NAME, else the domain of MAIL_FROM. */
  ehloName: string;
  /** Upper bound for any single SMTP exchange (connecting, each message), so a silent server costs no more. */
  timeoutMs: number;
};

/**
 * A delivery route (MAIL_ROUTES): an SMTP relay, or Cloudflare Email Service through the `send_email`
 * binding `EMAIL`. Mail tries the routes in order (src/mail/routes/).
 */
export type MailRoute = { name: string; kind: 'smtp'; smtp: SmtpConfig } | { name: string; kind: 'cloudflare' };

const DEFAULT_PORTS: Record<SmtpSecurity, number> = { tls: 465, starttls: 587, none: 25 };
const SMTP_TIMEOUT_MS = 15_000;

const securities = ['tls', 'starttls', 'none'] as const;

/** A host name as EHLO takes it (RFC 5321 §4.1.2 Domain): dot-separated letters, digits and hyphens. */
export const hostName = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, {
    error: 'expected a host name such as mail.example.com',
  });

/** One SMTP relay's settings; EHLO names the domain of MAIL_FROM unless a name is given. */
function smtpOf(
  relay: {
    host: string;
    port?: number;
    security: SmtpSecurity;
    username?: string;
    password?: string;
    ehloName?: string;
  },
  sender: Mailbox,
): SmtpConfig {
  return {
    host: relay.host,
    port: relay.port ?? DEFAULT_PORTS[relay.security],
    security: relay.security,
    credentials: relay.username ? { username: relay.username, password: relay.password ?? '' } : undefined,
    ehloName: relay.ehloName ?? sender.email.slice(sender.email.lastIndexOf('@') + 1),
    timeoutMs: SMTP_TIMEOUT_MS,
  };
}

export const securityEnum = z.enum(securities, { error: `expected one of ${securities.join(', ')}` });

/** A secret's name as wrangler takes it (MAIL_ROUTES names the secret that holds a relay's password). */
const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

/** MAIL_ROUTES: a JSON array of routes, names unique; a relay's password is read from the secret it names. */
export const routeList = z
  .string()
  .transform((raw, ctx): unknown => {
    try {
      return JSON.parse(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected a JSON array of routes' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(
        z.discriminatedUnion(
          'kind',
          [
            z.strictObject({
              name: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'expected a name of 1-32 letters, digits, _ or -'),
              kind: z.literal('smtp'),
              host: hostName,
              port: z.number().int().min(1).max(65_535).optional(),
              secure: securityEnum.default('starttls'),
              username: z.string().min(1).optional(),
              passwordSecret: z.string().regex(SECRET_NAME, 'expected the name of a secret').optional(),
              ehloName: hostName.optional(),
            }),
            z.strictObject({
              name: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'expected a name of 1-32 letters, digits, _ or -'),
              kind: z.literal('cloudflare'),
            }),
          ],
          { error: 'expected a route with kind smtp or cloudflare' },
        ),
      )
      .min(1, 'expected at least one route')
      .refine((routes) => new Set(routes.map((r) => r.name)).size === routes.length, 'route names must be unique'),
  );
type RouteEntry = z.output<typeof routeList>[number];

export function routesOf(
  vars: {
    MAIL_ROUTES?: RouteEntry[];
    SMTP_HOST?: string;
    SMTP_PORT?: number;
    SMTP_SECURE: SmtpSecurity;
    SMTP_USERNAME?: string;
    SMTP_PASSWORD?: string;
    SMTP_EHLO_NAME?: string;
    MAIL_FROM: Mailbox;
  },
  secrets: Record<string, unknown>,
): MailRoute[] {
  if (!vars.MAIL_ROUTES) {
    if (!vars.SMTP_HOST) return [];
    const relay = {
      host: vars.SMTP_HOST,
      port: vars.SMTP_PORT,
      security: vars.SMTP_SECURE,
      username: vars.SMTP_USERNAME,
      password: vars.SMTP_PASSWORD,
      ehloName: vars.SMTP_EHLO_NAME,
    };
    return [{ name: 'smtp', kind: 'smtp', smtp: smtpOf(relay, vars.MAIL_FROM) }];
  }
  return vars.MAIL_ROUTES.map((route): MailRoute => {
    if (route.kind === 'cloudflare') return { name: route.name, kind: 'cloudflare' };
    const password = route.passwordSecret ? String(secrets[route.passwordSecret] ?? '') : undefined;
    const relay = { ...route, security: route.secure, password };
    return { name: route.name, kind: 'smtp', smtp: smtpOf(relay, vars.MAIL_FROM) };
  });
}
