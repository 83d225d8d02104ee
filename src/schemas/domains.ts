import { z } from '@hono/zod-openapi';
import { DOMAIN_PATTERN, envelope, LABEL, pageOf, resourceId } from './common';

/** POST /api/v1/domains */
export const createDomainBody = z.strictObject({
  name: z.string().min(1, 'must be 1-253 characters').max(253, 'must be 1-253 characters').openapi({
    description:
      'The domain mail is sent from, e.g. example.com. The pattern covers ASCII names; an internationalized name (Unicode) is accepted too when it is a valid IDNA name, and kept as punycode. Not an IP address, localhost, or a name with underscores',
    pattern: DOMAIN_PATTERN,
    example: 'example.com',
  }),
});

export const domainIdParam = z.object({ domainId: resourceId });

const SUBDOMAIN_PATTERN = `^(?=.{1,200}$)${LABEL}(?:\\.${LABEL})*$`;

/** POST /api/v1/domains/{domainId}/inbound */
export const enableInboundBody = z.strictObject({
  subdomain: z
    .string()
    .regex(
      new RegExp(SUBDOMAIN_PATTERN),
      'expected DNS labels (letters, digits, inner hyphens), at most 200 characters',
    )
    .optional()
    .openapi({
      description:
        'Receive at this subdomain of the domain (e.g. `inbound` → inbound.example.com), one or more DNS labels; none: at the domain itself. Not the return path subdomain, and the whole name at most 253 characters',
      pattern: SUBDOMAIN_PATTERN,
      example: 'inbound',
    }),
});

const recordStatus = z.enum(['pending', 'verified', 'failed']);
export const domainStatus = z.enum(['pending', 'verified', 'partially_verified', 'failed']).openapi({
  description:
    'pending: no DKIM record found yet. verified: DKIM and return path found. partially_verified: DKIM found, return path not (mail is signed; the envelope uses the service return path). failed: no DKIM 72 h after adding, or a verified DKIM record disappeared',
});

export const domainRecord = z.object({
  purpose: z.enum(['dkim', 'return_path_mx', 'return_path_spf', 'dmarc', 'inbound_mx']),
  type: z.enum(['TXT', 'MX']),
  name: z.string().openapi({ description: 'The record name to publish' }),
  value: z.string().openapi({ description: 'The record value (DMARC: the recommended one; any valid DMARC counts)' }),
  priority: z.number().int().optional().openapi({ description: 'MX only' }),
  status: recordStatus,
});

export const domainDetail = z.object({
  id: z.string(),
  name: z.string(),
  status: domainStatus,
  records: z.array(domainRecord).openapi({
    description:
      'DKIM (one per listed selector: during a rotation, the new one and the one it replaces), the return path MX and SPF, DMARC, and the receiving MX while the domain receives mail',
  }),
  inbound: z
    .object({
      name: z
        .string()
        .openapi({ description: 'Mail to any address here reaches the account (its inbound routes decide)' }),
    })
    .nullable()
    .openapi({ description: 'Where the domain receives mail; null: it does not (POST …/inbound)' }),
  createdAt: z.string(),
});
export const domainSummary = domainDetail.pick({ id: true, name: true, status: true, createdAt: true });

export const domainResponse = envelope(domainDetail);
export const domainListResponse = pageOf('domains', domainSummary);
export const domainDeletedResponse = envelope(z.object({ id: z.string(), deleted: z.literal(true) }));
