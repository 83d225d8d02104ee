import { z } from '@hono/zod-openapi';

export { createSenderBody } from './senders';

import { IP_RANGE_PATTERN, parseIpRange } from '../auth/ip-allowlist';
import { LOGO_URL_PATTERN, parseLogoUrl } from '../otp/branding';
import { SCOPES } from '../store/control/credentials';
import { JURISDICTIONS, REGIONS } from '../store/placement';
import { emailAddress, envelope, label, pageOf, resourceId } from './common';

const region = z.enum(REGIONS).openapi({
  description:
    "Where the account's data is made: a location hint for its Durable Object (null: near its first request)",
});
const jurisdiction = z.enum(JURISDICTIONS).openapi({
  description:
    "Pins the account's Durable Object and its R2 buckets (BODIES_EU/ATTACHMENTS_EU, BODIES_FEDRAMP/ATTACHMENTS_FEDRAMP) to the jurisdiction",
});

export const createAccountBody = z.strictObject({
  name: label,
  region: region.nullable().optional(),
  jurisdiction: jurisdiction.nullable().optional(),
});

/** PATCH …/accounts/{accountId}: until the account's data exists (fields left out keep their value). */
export const changeAccountBody = z.strictObject({
  region: region.nullable().optional(),
  jurisdiction: jurisdiction.nullable().optional(),
});

const placement = {
  region: z.enum(REGIONS).nullable(),
  jurisdiction: z.enum(JURISDICTIONS).nullable(),
};

export const createApiKeyBody = z
  .strictObject({
    scopes: z
      .array(z.enum(SCOPES))
      .min(1, 'expected at least one scope')
      .max(SCOPES.length)
      .transform((scopes) => [...new Set(scopes)]),
    name: label.optional(),
    mode: z.enum(['live', 'test']).optional().openapi({
      description: '`test` issues a `pc_test_…` key: its mail runs the whole pipeline but never reaches SMTP',
    }),
  })
  .refine((body) => body.mode !== 'test' || (body.scopes.length === 1 && body.scopes[0] === 'mail_api'), {
    message: 'a test key takes only the mail_api scope',
    path: ['mode'],
  })
  .openapi({
    // A live key, or only mail_api.
    anyOf: [
      { properties: { mode: { enum: ['live'] } } },
      { properties: { scopes: { items: { enum: ['mail_api'] } } } },
    ],
    description: 'A test key (`mode: test`) takes only the mail_api scope',
  });

const allowedIps = z
  .array(
    z
      .string()
      .refine(
        (entry) => entry.trim() === entry && parseIpRange(entry) !== null,
        'expected an IPv4/IPv6 address or CIDR range',
      )
      .openapi({
        pattern: IP_RANGE_PATTERN,
        description: 'An IPv4 or IPv6 address, or a CIDR range (203.0.113.0/24, 2001:db8::/32)',
      }),
  )
  .max(100, 'at most 100 entries');

/** Printable ASCII without spaces: what Cloudflare's site keys and secrets are made of. */
const turnstileKey = (max: number) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces');

const turnstileSetting = z.strictObject({ siteKey: turnstileKey(100), secret: turnstileKey(200) }).openapi({
  description:
    "Require a Cloudflare Turnstile check on this token's sends: the widget's site key (given to browsers) and its secret (kept sealed, never shown again)",
});

/** A token's send policy (docs/otp.md): each field left out keeps its value (on create: off). */
const sendPolicy = z
  .strictObject({
    domainSendsPerHour: z
      .number()
      .int('expected a whole number')
      .min(1)
      .max(1_000_000)
      .nullable()
      .optional()
      .openapi({ description: 'Codes per recipient domain per hour with this token; null: no cap' }),
    blockDisposable: z
      .boolean()
      .optional()
      .openapi({ description: 'Refuse addresses at disposable-address domains (403 ADDRESS_NOT_ALLOWED)' }),
    blockSubaddresses: z
      .boolean()
      .optional()
      .openapi({ description: 'Refuse sub-addresses such as ada+x@example.com (403 ADDRESS_NOT_ALLOWED)' }),
  })
  .openapi({ description: "Where this token's sends may go; opt-in" });

export const createOtpTokenBody = z.strictObject({
  allowedIps: allowedIps.optional(),
  turnstile: turnstileSetting.optional(),
  policy: sendPolicy.optional(),
});

/**
 * PATCH /admin/v1/otp-tokens/{tokenId}: a field left out keeps its value (a policy's fields each on their own);
 * `turnstile: null` takes the check off.
 */
export const changeOtpTokenBody = z.strictObject({
  allowedIps: allowedIps.optional(),
  turnstile: turnstileSetting.nullable().optional(),
  policy: sendPolicy.optional(),
});

export const updateSettingsBody = z.strictObject({
  frozen: z.boolean().optional(),
  dailyAllowance: z.number().int('expected a whole number').min(0).max(1_000_000_000).nullable().optional(),
});

const logoUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .transform((value, ctx) => {
    const url = parseLogoUrl(value);
    if (url) return url.href;
    ctx.addIssue({
      code: 'custom',
      message: 'expected an https URL of a host name (letters, digits, hyphens, dots), without credentials',
    });
    return z.NEVER;
  })
  .openapi({ format: 'uri', pattern: LOGO_URL_PATTERN });

/** PUT …/otp-branding: replaces the branding; a field left out or null is cleared. */
export const otpBrandingBody = z.strictObject({
  productName: label.max(100, 'must be at most 100 characters').nullable().optional().openapi({
    description: 'Shown at the top of OTP mail and the hosted page; `{{productName}}` in OTP templates',
  }),
  logoUrl: logoUrl
    .nullable()
    .optional()
    .openapi({
      description:
        'A logo above the product name: an https URL whose host is a name of letters, digits, hyphens and dots, ' +
        'without user, password, spaces, control characters or backslashes; stored as the URL parser normalises it',
    }),
  accentColor: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'expected a colour as #rrggbb')
    .transform((value) => value.toLowerCase())
    .nullable()
    .optional()
    .openapi({ pattern: '^#[0-9a-fA-F]{6}$', example: '#4f46e5', description: 'Buttons, the code and focus rings' }),
  supportEmail: z
    .union([emailAddress, z.null()])
    .optional()
    .openapi({ description: 'Named in the mail and on the page as the address for help' }),
});

export const accountIdParam = z.object({ accountId: resourceId });
export const keyIdParam = z.object({ keyId: resourceId });
export const tokenIdParam = z.object({ tokenId: resourceId });

export const accountResponse = envelope(z.object({ id: z.string(), name: z.string(), ...placement }));
export const accountDetailResponse = envelope(
  z.object({
    id: z.string(),
    name: z.string(),
    createdAt: z.string(),
    ...placement,
    placedAt: z.string().nullable().openapi({
      description: "When the account's data was first reached (its object made); from then on its place is fixed",
    }),
  }),
);
export const apiKeyCreatedResponse = envelope(
  z.object({ id: z.string(), key: z.string(), scopes: z.array(z.enum(SCOPES)), mode: z.enum(['live', 'test']) }),
);
export const apiKeyRevokedResponse = envelope(z.object({ id: z.string(), revoked: z.literal(true) }));
/** What a token requires of its sends' browsers: never its secret. */
const turnstileShown = z
  .object({ siteKey: z.string() })
  .nullable()
  .openapi({ description: "The Turnstile widget's site key when sends need the check; null: no bot check" });
const policyShown = z.object({
  domainSendsPerHour: z.number().nullable(),
  blockDisposable: z.boolean(),
  blockSubaddresses: z.boolean(),
});
export const otpTokenCreatedResponse = envelope(
  z.object({
    id: z.string(),
    token: z.string(),
    analyticsSecret: z.string(),
    allowedIps: z.array(z.string()),
    turnstile: turnstileShown,
    policy: policyShown,
  }),
);
const otpTokenView = z.object({
  id: z.string(),
  allowedIps: z.array(z.string()),
  turnstile: turnstileShown,
  policy: policyShown,
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export const otpTokenResponse = envelope(otpTokenView);
export const senderResponse = envelope(z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }));
export const settingsResponse = envelope(
  z.object({ frozen: z.boolean(), dailyAllowance: z.number().nullable(), updatedAt: z.string() }),
);
export const otpBrandingResponse = envelope(
  z.object({
    accountId: z.string(),
    productName: z.string().nullable(),
    logoUrl: z.string().nullable(),
    accentColor: z.string().nullable(),
    supportEmail: z.string().nullable(),
    updatedAt: z.string().nullable(),
  }),
);

/** The operator's lists: newest first; never a key, token or secret, which are shown only once. */
export const accountListResponse = pageOf(
  'accounts',
  z.object({ id: z.string(), name: z.string(), createdAt: z.string(), ...placement, placedAt: z.string().nullable() }),
);
export const apiKeyListResponse = pageOf(
  'apiKeys',
  z.object({
    id: z.string(),
    name: z.string().nullable(),
    scopes: z.array(z.enum(SCOPES)),
    mode: z.enum(['live', 'test']),
    createdAt: z.string(),
    lastUsedAt: z
      .string()
      .nullable()
      .openapi({ description: 'At most an hour behind the latest use; null when never used' }),
    revokedAt: z.string().nullable(),
  }),
);
export const otpTokenListResponse = pageOf('otpTokens', otpTokenView);
export const senderListResponse = pageOf(
  'senders',
  z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), createdAt: z.string() }),
);
