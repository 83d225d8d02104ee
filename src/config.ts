import type { Bindings } from './env';
import { ApiError } from './errors';

export type SmtpSecurity = 'tls' | 'starttls' | 'none';

export type SmtpConfig = {
  host: string;
  port: number;
  security: SmtpSecurity;
  credentials?: { username: string; password: string };
  /** Upper bound for any single SMTP exchange: worker-mailer can hang on a dead socket. */
  timeoutMs: number;
};

export type Mailbox = { email: string; name: string | null };

const DEFAULT_PORTS: Record<SmtpSecurity, number> = { tls: 465, starttls: 587, none: 25 };

/** The SMTP route, or null when none is configured (sending routes then answer 503). */
export function smtpConfig(env: Bindings): SmtpConfig | null {
  const host = env.SMTP_HOST?.trim();
  if (!host) return null;
  const security = (['tls', 'starttls', 'none'] as const).find((s) => s === env.SMTP_SECURE) ?? 'starttls';
  const port = Number(env.SMTP_PORT) || DEFAULT_PORTS[security];
  const username = env.SMTP_USERNAME?.trim();
  return {
    host,
    port,
    security,
    credentials: username ? { username, password: env.SMTP_PASSWORD ?? '' } : undefined,
    timeoutMs: 15_000,
  };
}

export function requireSmtp(env: Bindings): SmtpConfig {
  const config = smtpConfig(env);
  if (!config) throw new ApiError('SMTP_NOT_CONFIGURED', 'Outbound SMTP is not configured on this service');
  return config;
}

/** `MAIL_FROM` as `Name <addr>` or a bare address. */
export function defaultSender(env: Bindings): Mailbox {
  const raw = (env.MAIL_FROM ?? '').trim();
  const match = raw.match(/^(.*?)\s*<([^<>\s]+)>$/);
  if (match) return { name: match[1]!.replace(/^"|"$/g, '') || null, email: match[2]! };
  return { name: null, email: raw || 'no-reply@postcode.invalid' };
}
