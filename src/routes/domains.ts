import { liveMailApi } from '../auth/guards';
import type { DomainsConfig } from '../config';
import { config } from '../config';
import { disableDomainInbound, enableDomainInbound } from '../inbound/own-domains';
import { domainRecords } from '../mail/domain-check';
import { addDomain, domainNotFound, removeDomain, rotateDkim, verifyDomain } from '../mail/domains';
import { linksFilling } from '../openapi/document';
import { pageData, pageQuery, pageRequest } from '../schemas/common';
import * as schema from '../schemas/domains';
import { type Domain, findDomain, listDomains } from '../store/control/domains';
import { readOwnWrite, replicaReads } from '../store/control/reads';
import { json, ok, route, router } from './route';

// Sending domains (docs/domains.md). Managing them counts against the per-credential read bucket.

const detail = (domain: Domain, settings: DomainsConfig) => ({
  id: domain.id,
  name: domain.name,
  status: domain.status,
  records: domainRecords(domain, settings),
  inbound: domain.inboundName ? { name: domain.inboundName } : null,
  createdAt: domain.createdAt,
});

const DOMAIN = {
  id: 'dom_q3k7zt2mxwa5n4cr8hbe6ypd',
  name: 'example.com',
  status: 'pending' as const,
  records: [
    {
      purpose: 'dkim' as const,
      type: 'TXT' as const,
      name: 'pcq3k7zt2m._domainkey.example.com',
      value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA…',
      status: 'pending' as const,
    },
    {
      purpose: 'return_path_mx' as const,
      type: 'MX' as const,
      name: 'pc-bounces.example.com',
      value: 'mx.postcode.example',
      priority: 10,
      status: 'pending' as const,
    },
    {
      purpose: 'dmarc' as const,
      type: 'TXT' as const,
      name: '_dmarc.example.com',
      value: 'v=DMARC1; p=none;',
      status: 'pending' as const,
    },
  ],
  inbound: null,
  createdAt: '2026-11-26T09:00:00.000Z',
};

const VERIFIED_DOMAIN = {
  ...DOMAIN,
  status: 'verified' as const,
  records: DOMAIN.records.map((r) => ({ ...r, status: 'verified' as const })),
};

const RECEIVING_DOMAIN = {
  ...VERIFIED_DOMAIN,
  records: [
    ...VERIFIED_DOMAIN.records,
    {
      purpose: 'inbound_mx' as const,
      type: 'MX' as const,
      name: 'inbound.example.com',
      value: 'mx.postcode.example',
      priority: 10,
      status: 'pending' as const,
    },
  ],
  inbound: { name: 'inbound.example.com' },
};

const common = { tag: 'Domains', guard: liveMailApi, limit: { bucket: 'read' } } as const;

const create = route({
  ...common,
  method: 'post',
  path: '/api/v1/domains',
  summary: 'Add a sending domain',
  description:
    'Makes a DKIM key pair for the domain and answers the records to publish. The domain signs and sends once its DKIM record is found (POST …/verify, or the scheduled checks).',
  body: schema.createDomainBody,
  bodyExample: { name: 'example.com' },
  success: {
    status: 201,
    content: json(schema.domainResponse, { success: true, data: DOMAIN }),
    links: linksFilling('domainId', '$response.body#/data/id', {
      getDomain: ['get', '/api/v1/domains/{domainId}'],
      verifyDomain: ['post', '/api/v1/domains/{domainId}/verify'],
      rotateDkim: ['post', '/api/v1/domains/{domainId}/rotate-dkim'],
      enableDomainInbound: ['post', '/api/v1/domains/{domainId}/inbound'],
      deleteDomain: ['delete', '/api/v1/domains/{domainId}'],
    }),
  },
  errors: ['DOMAIN_TAKEN'],
});

const list = route({
  ...common,
  method: 'get',
  path: '/api/v1/domains',
  summary: 'List sending domains',
  query: pageQuery,
  success: {
    status: 200,
    content: json(schema.domainListResponse, {
      success: true,
      data: {
        domains: [{ id: DOMAIN.id, name: DOMAIN.name, status: 'verified', createdAt: DOMAIN.createdAt }],
        total: 1,
        page: 1,
        totalPages: 1,
        nextCursor: null,
      },
    }),
  },
});

const get = route({
  ...common,
  method: 'get',
  path: '/api/v1/domains/{domainId}',
  summary: 'Get a sending domain and its records',
  params: schema.domainIdParam,
  success: { status: 200, content: json(schema.domainResponse, { success: true, data: DOMAIN }) },
  errors: ['DOMAIN_NOT_FOUND'],
});

const remove = route({
  ...common,
  method: 'delete',
  path: '/api/v1/domains/{domainId}',
  summary: 'Remove a sending domain',
  description: 'Mail from it is no longer signed, and addresses on it are no longer senders of the account.',
  params: schema.domainIdParam,
  success: {
    status: 200,
    content: json(schema.domainDeletedResponse, { success: true, data: { id: DOMAIN.id, deleted: true } }),
  },
  errors: ['DOMAIN_NOT_FOUND'],
});

const verify = route({
  ...common,
  method: 'post',
  path: '/api/v1/domains/{domainId}/verify',
  summary: "Check the domain's DNS records now",
  description:
    'Looks the records up now and answers the domain with what was found. 409 DOMAIN_TAKEN when DKIM is found but another account holds the domain verified. A resolver that does not answer changes nothing.',
  params: schema.domainIdParam,
  success: { status: 200, content: json(schema.domainResponse, { success: true, data: VERIFIED_DOMAIN }) },
  errors: ['DOMAIN_NOT_FOUND', 'DOMAIN_TAKEN'],
});

const rotate = route({
  ...common,
  method: 'post',
  path: '/api/v1/domains/{domainId}/rotate-dkim',
  summary: 'Rotate the DKIM key',
  description:
    'Adds a new selector (pending). Signing moves to it once its record is found; the one it replaces stays listed and signs for 7 more days. While a new selector is pending, this answers the domain as it is.',
  params: schema.domainIdParam,
  success: { status: 200, content: json(schema.domainResponse, { success: true, data: DOMAIN }) },
  errors: ['DOMAIN_NOT_FOUND'],
});

const enableInbound = route({
  ...common,
  method: 'post',
  path: '/api/v1/domains/{domainId}/inbound',
  summary: 'Receive mail on the domain',
  description:
    "Mail to the domain (or `subdomain`.domain) reaches the account once its MX record (`inbound_mx`) points at the service; the account's inbound routes decide what happens to it. The domain must sign first (409 DOMAIN_NOT_VERIFIED). Calling it again moves receiving to the new name. 409 DOMAIN_TAKEN when another account holds a more specific domain over the name (that account owns it); 503 INBOUND_NOT_CONFIGURED when the service has no MX host for customers' domains. See docs/inbound.md for which setups reach the service.",
  params: schema.domainIdParam,
  body: schema.enableInboundBody,
  bodyExample: { subdomain: 'inbound' },
  success: {
    status: 200,
    content: json(schema.domainResponse, { success: true, data: RECEIVING_DOMAIN }),
    links: linksFilling('domainId', '$response.body#/data/id', {
      verifyDomain: ['post', '/api/v1/domains/{domainId}/verify'],
      disableDomainInbound: ['delete', '/api/v1/domains/{domainId}/inbound'],
    }),
  },
  errors: ['DOMAIN_NOT_FOUND', 'DOMAIN_NOT_VERIFIED', 'DOMAIN_TAKEN', 'INBOUND_NOT_CONFIGURED'],
});

const disableInbound = route({
  ...common,
  method: 'delete',
  path: '/api/v1/domains/{domainId}/inbound',
  summary: 'Stop receiving mail on the domain',
  description:
    'Mail to it is no longer taken for the account (its inbound routes there stay, matching nothing). The domain as it is when it did not receive.',
  params: schema.domainIdParam,
  success: { status: 200, content: json(schema.domainResponse, { success: true, data: VERIFIED_DOMAIN }) },
  errors: ['DOMAIN_NOT_FOUND'],
});

export const domainRoutes = router()
  .openapi(create, async (c) => {
    const domain = await addDomain(c.env, c.var.credential.accountId, c.req.valid('json').name);
    return ok(c, detail(domain, config(c.env).domains), 201);
  })
  .openapi(list, async (c) => {
    const request = pageRequest(c.req.valid('query'));
    const page = await listDomains(replicaReads(c.env.DB), c.var.credential.accountId, request);
    return ok(c, pageData('domains', page, request));
  })
  .openapi(get, async (c) => {
    const { domainId } = c.req.valid('param');
    const domain = await readOwnWrite(c.env.DB, (db) => findDomain(db, c.var.credential.accountId, domainId));
    if (!domain) throw domainNotFound();
    return ok(c, detail(domain, config(c.env).domains));
  })
  .openapi(remove, async (c) => {
    const { domainId } = c.req.valid('param');
    await removeDomain(c.env, c.var.credential.accountId, domainId);
    return ok(c, { id: domainId, deleted: true as const });
  })
  .openapi(verify, async (c) => {
    const domain = await verifyDomain(c.env, c.var.credential.accountId, c.req.valid('param').domainId);
    return ok(c, detail(domain, config(c.env).domains));
  })
  .openapi(rotate, async (c) => {
    const domain = await rotateDkim(c.env, c.var.credential.accountId, c.req.valid('param').domainId);
    return ok(c, detail(domain, config(c.env).domains));
  })
  .openapi(enableInbound, async (c) => {
    const { domainId } = c.req.valid('param');
    const { subdomain } = c.req.valid('json');
    const domain = await enableDomainInbound(c.env, c.var.credential.accountId, domainId, subdomain);
    return ok(c, detail(domain, config(c.env).domains));
  })
  .openapi(disableInbound, async (c) => {
    const domain = await disableDomainInbound(c.env, c.var.credential.accountId, c.req.valid('param').domainId);
    return ok(c, detail(domain, config(c.env).domains));
  });
