// Contract test against the running service: the document validates as OpenAPI 3.1, and for every
// documented operation real responses (successes and errors) validate against the documented schema.

import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { checkDomainsAndSenders } from './contract-domains';

const service = inject('e2e');

type ResponseObject = { content?: Record<string, { schema?: object }> };
type OperationObject = { responses: Record<string, ResponseObject> };
type OpenApiDocument = { openapi: string; paths: Record<string, Record<string, OperationObject>> };

let doc: OpenApiDocument;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
/** `METHOD /template status` of every response that was validated. */
const validated = new Set<string>();

async function check(
  method: string,
  template: string,
  path: string,
  init: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(service.baseUrl + path, {
    method,
    headers,
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  const operation = doc.paths[template]?.[method.toLowerCase()];
  expect(operation, `${method} ${template} is documented`).toBeDefined();
  const documented = operation!.responses[String(res.status)];
  expect(
    documented,
    `${method} ${path} answered ${res.status}, which is not documented: ${text.slice(0, 200)}`,
  ).toBeDefined();
  const contentType = res.headers.get('Content-Type')?.split(';')[0] ?? '';
  // A media range (`*/*`: an attachment answered as its own type) covers what it names.
  const media = documented!.content?.[contentType] ?? documented!.content?.['*/*'];
  expect(media, `${method} ${path} ${res.status}: ${contentType} is not documented`).toBeDefined();
  if (contentType === 'application/json' && media!.schema) {
    const validate = ajv.compile(media!.schema);
    const body = JSON.parse(text);
    expect(
      validate(body),
      `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)} for ${text.slice(0, 300)}`,
    ).toBe(true);
  }
  validated.add(`${method} ${template} ${res.status}`);
  return { status: res.status, json: contentType === 'application/json' ? JSON.parse(text) : text };
}

/** A WebSocket handshake (the documented success of an upgrade route is 101, which fetch cannot show). */
async function checkUpgrade(template: string, path: string, token: string) {
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(service.baseUrl + path, {
      headers: {
        Authorization: `Bearer ${token}`,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
  expect(status, `GET ${path}: the handshake`).toBe(101);
  expect(doc.paths[template]?.get?.responses['101'], `GET ${template} documents 101`).toBeDefined();
  validated.add(`GET ${template} 101`);
}

async function codeFromInbox(email: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(`${service.inboxUrl}/email`)).json()) as {
      to: { address: string }[];
      text: string;
    }[];
    const mail = mails.find((m) => m.to.some((t) => t.address === email));
    const code = mail && /^\s*(\d{4,10})\s*$/m.exec(mail.text)?.[1];
    if (code) return code;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no code arrived for ${email}`);
}

const address = (prefix: string) => `${prefix}.${randomUUID().slice(0, 8)}@example.com`;

describe('OpenAPI document', () => {
  beforeAll(async () => {
    doc = (await (await fetch(`${service.baseUrl}/api/v1/openapi.json`)).json()) as OpenApiDocument;
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('the /docs bundle is served by the Worker; other paths, even beside it, are its JSON 404', async () => {
    const script = await fetch(`${service.baseUrl}/vendor/scalar/standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-encoding')).toBe('gzip'); // fetch asks for it, and decodes it
    expect(await script.text()).toContain('createApiReference');
    for (const path of ['/vendor/no-such-file.js', '/no-such-route']) {
      const res = await fetch(service.baseUrl + path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    }
  });

  it('real responses of every operation match their documented schemas, errors included', async () => {
    const admin = service.adminToken;
    const T = (path: string) => path; // templates equal paths for static routes
    // Service
    await check('GET', '/', T('/'));
    await check('GET', '/health', T('/health'));
    await check('GET', '/api/v1/openapi.json', T('/api/v1/openapi.json'));
    await check('GET', '/docs', T('/docs'));
    await check('GET', '/vendor/scalar/standalone.js', T('/vendor/scalar/standalone.js'));
    // The <postcode-otp> element: the current file, the manifest, and the hashed copy it names.
    await check('GET', '/sdk/v1/otp.js', T('/sdk/v1/otp.js'));
    const sdkManifest = (await check('GET', '/sdk/v1/manifest.json', T('/sdk/v1/manifest.json'))).json as unknown as {
      files: { 'otp.js': { path: string } };
    };
    await check('GET', '/sdk/v1/{file}', sdkManifest.files['otp.js'].path);
    await check('GET', '/sdk/v1/{file}', '/sdk/v1/otp.0000000000000000.js');
    // Every route refuses a query parameter it does not declare.
    for (const path of [
      '/',
      '/health',
      '/api/v1/openapi.json',
      '/docs',
      '/vendor/scalar/standalone.js',
      '/sdk/v1/otp.js',
      '/sdk/v1/manifest.json',
    ]) {
      await check('GET', path, `${path}?stauts=1`);
    }

    // Operator API: a fresh account with every credential
    const account = (
      await check('POST', '/admin/v1/accounts', '/admin/v1/accounts', { token: admin, body: { name: 'contract' } })
    ).json.data;
    await check('POST', '/admin/v1/accounts', '/admin/v1/accounts', { token: admin, body: {} });
    await check('POST', '/admin/v1/accounts', '/admin/v1/accounts', { body: { name: 'x' } });
    // Its place, while its data has not been reached (the branding read below makes its object: then 409).
    const accountPath = `/admin/v1/accounts/${account.id}`;
    const change = '/admin/v1/accounts/{accountId}';
    await check('PATCH', change, accountPath, { token: admin, body: { region: 'weur', jurisdiction: null } });
    await check('PATCH', change, accountPath, { token: admin, body: { region: 'mars' } });
    await check('PATCH', change, '/admin/v1/accounts/acc_unknown', { token: admin, body: { region: 'oc' } });
    const keysPath = `/admin/v1/accounts/${account.id}/api-keys`;
    const mailKey = (
      await check('POST', '/admin/v1/accounts/{accountId}/api-keys', keysPath, {
        token: admin,
        body: { scopes: ['mail_api'] },
      })
    ).json.data.key;
    const serverKey = (
      await check('POST', '/admin/v1/accounts/{accountId}/api-keys', keysPath, {
        token: admin,
        body: { scopes: ['server_otp'] },
      })
    ).json.data.key;
    const spare = (
      await check('POST', '/admin/v1/accounts/{accountId}/api-keys', keysPath, {
        token: admin,
        body: { scopes: ['mail_api'] },
      })
    ).json.data;
    await check('POST', '/admin/v1/accounts/{accountId}/api-keys', '/admin/v1/accounts/acc_unknown/api-keys', {
      token: admin,
      body: { scopes: ['mail_api'] },
    });
    await check('POST', '/admin/v1/accounts/{accountId}/api-keys', keysPath, {
      token: admin,
      body: { scopes: ['mail_api'], mode: 'test' },
    });
    await check('DELETE', '/admin/v1/api-keys/{keyId}', `/admin/v1/api-keys/${spare.id}`, { token: admin });
    await check('DELETE', '/admin/v1/api-keys/{keyId}', '/admin/v1/api-keys/key_unknown', { token: admin });
    const tokenPath = `/admin/v1/accounts/${account.id}/otp-tokens`;
    const token = (
      await check('POST', '/admin/v1/accounts/{accountId}/otp-tokens', tokenPath, { token: admin, body: {} })
    ).json.data;
    await check('POST', '/admin/v1/accounts/{accountId}/otp-tokens', tokenPath, {
      token: admin,
      body: { allowedIps: ['nope'] },
    });
    // A second token that requires Turnstile (npm start's Siteverify knows Cloudflare's test secrets).
    const challenged = (
      await check('POST', '/admin/v1/accounts/{accountId}/otp-tokens', tokenPath, { token: admin, body: {} })
    ).json.data;
    const turnstile = { siteKey: '1x00000000000000000000AA', secret: '1x0000000000000000000000000000000AA' };
    const changePath = '/admin/v1/otp-tokens/{tokenId}';
    await check('PATCH', changePath, `/admin/v1/otp-tokens/${challenged.id}`, { token: admin, body: { turnstile } });
    await check('PATCH', changePath, '/admin/v1/otp-tokens/otk_unknown', { token: admin, body: { turnstile: null } });
    const sendersPath = `/admin/v1/accounts/${account.id}/senders`;
    await check('POST', '/admin/v1/accounts/{accountId}/senders', sendersPath, {
      token: admin,
      body: { email: address('sender'), name: 'Sender' },
    });
    await check('POST', '/admin/v1/accounts/{accountId}/senders', sendersPath, {
      token: admin,
      body: { email: 'not an address' },
    });
    const membersPath = `/admin/v1/accounts/${account.id}/members`;
    const owner = { email: address('owner'), role: 'owner' };
    await check('POST', '/admin/v1/accounts/{accountId}/members', membersPath, { token: admin, body: owner });
    await check('POST', '/admin/v1/accounts/{accountId}/members', membersPath, { token: admin, body: owner });
    await check('POST', '/admin/v1/accounts/{accountId}/members', membersPath, {
      token: admin,
      body: { email: address('member'), role: 'root' },
    });
    const brandingPath = `/admin/v1/accounts/${account.id}/otp-branding`;
    const branding = '/admin/v1/accounts/{accountId}/otp-branding';
    await check('GET', branding, brandingPath, { token: admin });
    await check('GET', branding, '/admin/v1/accounts/acc_unknown/otp-branding', { token: admin });
    await check('PUT', branding, brandingPath, {
      token: admin,
      body: { productName: 'Contract', accentColor: '#123abc', supportEmail: 'help@contract.example' },
    });
    await check('PUT', branding, brandingPath, { token: admin, body: { logoUrl: 'http://insecure.example/x.png' } });
    // The branding reached the account's data: its place is fixed.
    await check('PATCH', change, accountPath, { token: admin, body: { region: 'enam' } });
    await check('GET', '/admin/v1/settings', '/admin/v1/settings', { token: admin });
    // The operator's lists: accounts, and an account's keys, OTP tokens, senders and members.
    await check('GET', '/admin/v1/accounts', '/admin/v1/accounts?limit=2', { token: admin });
    await check('GET', '/admin/v1/accounts', '/admin/v1/accounts?limit=0', { token: admin });
    for (const list of ['api-keys', 'otp-tokens', 'senders', 'members']) {
      const template = `/admin/v1/accounts/{accountId}/${list}`;
      await check('GET', template, `/admin/v1/accounts/${account.id}/${list}`, { token: admin });
      await check('GET', template, `/admin/v1/accounts/acc_unknown/${list}`, { token: admin });
    }
    await check('GET', '/admin/v1/settings', '/admin/v1/settings', { token: 'wrong' });
    await check('PUT', '/admin/v1/settings', '/admin/v1/settings', { token: admin, body: { frozen: false } });
    await check('PUT', '/admin/v1/settings', '/admin/v1/settings', { token: admin, body: { frozen: 'no' } });

    // Mail and templates
    const to = address('contract');
    const queued = (
      await check('POST', '/api/v1/emails', '/api/v1/emails', {
        token: mailKey,
        body: { to, subject: 'Contract', text: 'hi' },
      })
    ).json.data;
    const detail = '/api/v1/emails/{emailId}';
    await check('GET', detail, `/api/v1/emails/${queued.id}`, { token: mailKey });
    await check('GET', detail, '/api/v1/emails/em_unknown', { token: mailKey });
    await check('GET', '/api/v1/emails', `/api/v1/emails?status=SENT&to=${encodeURIComponent(to)}`, { token: mailKey });
    await check('GET', '/api/v1/metrics', '/api/v1/metrics?granularity=hour', { token: mailKey });
    await check('GET', '/api/v1/metrics', '/api/v1/metrics?granularity=week', { token: mailKey });

    // Sending features: a rich email and its detail, the tag filter, the batch, scheduling, cancel and move
    const rich = (
      await check('POST', '/api/v1/emails', '/api/v1/emails', {
        token: mailKey,
        body: {
          to,
          cc: address('cc'),
          bcc: [address('bcc')],
          replyTo: address('reply'),
          subject: 'Rich',
          text: 'hi',
          html: '<p>hi <img src="cid:logo"></p>',
          tags: [{ name: 'category', value: 'contract' }],
          headers: { 'X-Entity-Ref-ID': 'contract-1' },
          attachments: [
            { filename: 'note.txt', content: btoa('hello') },
            { filename: 'logo.png', content: btoa('not really a png'), contentId: 'logo' },
          ],
        },
      })
    ).json.data;
    await check('GET', detail, `/api/v1/emails/${rich.id}`, { token: mailKey });
    await check('GET', '/api/v1/emails', '/api/v1/emails?tag=category:contract', { token: mailKey });
    await check('GET', '/api/v1/emails', '/api/v1/emails?tag=category', { token: mailKey });
    const batch = '/api/v1/emails/batch';
    await check('POST', batch, batch, {
      token: mailKey,
      body: {
        emails: [
          { to, subject: 'B1', text: 'x' },
          { to, subject: 'B2', text: 'y' },
        ],
      },
    });
    await check('POST', batch, batch, { token: mailKey, body: { emails: [{ to, subject: 'B1', text: 'x' }, { to }] } });
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = (
      await check('POST', '/api/v1/emails', '/api/v1/emails', {
        token: mailKey,
        body: { to, subject: 'Later', text: 'x', scheduledAt: inAnHour },
      })
    ).json.data;
    await check('GET', detail, `/api/v1/emails/${scheduled.id}`, { token: mailKey });
    const move = '/api/v1/emails/{emailId}';
    const inTwoHours = new Date(Date.now() + 7_200_000).toISOString();
    await check('PATCH', move, `/api/v1/emails/${scheduled.id}`, { token: mailKey, body: { scheduledAt: inTwoHours } });
    await check('PATCH', move, `/api/v1/emails/${queued.id}`, { token: mailKey, body: { scheduledAt: inTwoHours } });
    const cancel = '/api/v1/emails/{emailId}/cancel';
    await check('POST', cancel, `/api/v1/emails/${scheduled.id}/cancel`, { token: mailKey });
    await check('POST', cancel, `/api/v1/emails/${scheduled.id}/cancel`, { token: mailKey });

    // Suppressions
    const suppressed = address('suppressed');
    await check('POST', '/api/v1/suppressions', '/api/v1/suppressions', {
      token: mailKey,
      body: { email: suppressed, note: 'contract', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    await check('POST', '/api/v1/suppressions', '/api/v1/suppressions', { token: mailKey, body: { email: 'x' } });
    await check('GET', '/api/v1/suppressions', '/api/v1/suppressions?limit=5', { token: mailKey });
    await check('GET', '/api/v1/suppressions', '/api/v1/suppressions?limit=0', { token: mailKey });
    const unsuppress = '/api/v1/suppressions/{email}';
    await check('DELETE', unsuppress, `/api/v1/suppressions/${encodeURIComponent(suppressed)}`, { token: mailKey });
    await check('DELETE', unsuppress, `/api/v1/suppressions/${encodeURIComponent(suppressed)}`, { token: mailKey });

    // Domains, senders and the hosted confirmation page
    await checkDomainsAndSenders(check, mailKey, service.inboxUrl);

    // Webhooks (nothing listens at the URL: the calls are what is checked here)
    const hook = (
      await check('POST', '/api/v1/webhooks', '/api/v1/webhooks', {
        token: mailKey,
        body: { url: 'http://127.0.0.1:9/hook', events: ['email.sent'], description: 'contract' },
      })
    ).json.data;
    await check('POST', '/api/v1/webhooks', '/api/v1/webhooks', {
      token: mailKey,
      body: { url: 'http://127.0.0.1:9/hook', events: ['otp.sent'] },
    });
    await check('GET', '/api/v1/webhooks', '/api/v1/webhooks', { token: serverKey });
    await check('GET', '/api/v1/webhooks', '/api/v1/webhooks', {});
    const hookPath = '/api/v1/webhooks/{webhookId}';
    await check('GET', hookPath, `/api/v1/webhooks/${hook.id}`, { token: mailKey });
    await check('GET', hookPath, '/api/v1/webhooks/whk_unknown', { token: mailKey });
    await check('PATCH', hookPath, `/api/v1/webhooks/${hook.id}`, { token: mailKey, body: { rotateSecret: true } });
    await check('PATCH', hookPath, `/api/v1/webhooks/${hook.id}`, { token: mailKey, body: {} });
    const testPath = '/api/v1/webhooks/{webhookId}/test';
    const testDelivery = (await check('POST', testPath, `/api/v1/webhooks/${hook.id}/test`, { token: mailKey })).json
      .data;
    await check('POST', testPath, '/api/v1/webhooks/whk_unknown/test', { token: mailKey });
    const logPath = '/api/v1/webhooks/{webhookId}/deliveries';
    await check('GET', logPath, `/api/v1/webhooks/${hook.id}/deliveries`, { token: mailKey });
    await check('GET', logPath, '/api/v1/webhooks/whk_unknown/deliveries', { token: mailKey });
    const retryPath = '/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry';
    await check('POST', retryPath, `/api/v1/webhooks/${hook.id}/deliveries/${testDelivery.id}/retry`, {
      token: mailKey,
    });
    await check('POST', retryPath, `/api/v1/webhooks/${hook.id}/deliveries/msg_unknown/retry`, { token: mailKey });
    await check('DELETE', hookPath, `/api/v1/webhooks/${hook.id}`, { token: mailKey });
    await check('DELETE', hookPath, `/api/v1/webhooks/${hook.id}`, { token: mailKey });

    // Receiving: the account's domains and its inbound routes
    const inboundDomain = (
      await check('GET', '/api/v1/inbound/addresses', '/api/v1/inbound/addresses', { token: mailKey })
    ).json.data.domains[0].domain;
    await check('GET', '/api/v1/inbound/addresses', '/api/v1/inbound/addresses', { token: serverKey });
    const routesPath = '/api/v1/inbound/routes';
    const inboundRoute = (
      await check('POST', routesPath, routesPath, {
        token: mailKey,
        body: { pattern: `contract+*@${inboundDomain}`, action: 'store' },
      })
    ).json.data;
    await check('POST', routesPath, routesPath, {
      token: mailKey,
      body: { pattern: 'x@example.com', action: 'store' },
    });
    await check('GET', routesPath, routesPath, { token: mailKey });
    await check('GET', routesPath, routesPath, { token: serverKey });
    const routePath = '/api/v1/inbound/routes/{routeId}';
    await check('GET', routePath, `${routesPath}/${inboundRoute.id}`, { token: mailKey });
    await check('GET', routePath, `${routesPath}/inr_unknown`, { token: mailKey });
    await check('PATCH', routePath, `${routesPath}/${inboundRoute.id}`, { token: mailKey, body: { action: 'reject' } });
    await check('PATCH', routePath, `${routesPath}/${inboundRoute.id}`, { token: mailKey, body: {} });
    await check('DELETE', routePath, `${routesPath}/${inboundRoute.id}`, { token: mailKey });
    await check('DELETE', routePath, `${routesPath}/${inboundRoute.id}`, { token: mailKey });

    // Received mail: one message with an attachment, through the local email handler (as Email Routing hands it)
    const inboxAddress = `contract-inbound@${inboundDomain}`;
    const mailRoute = (
      await check('POST', routesPath, routesPath, { token: mailKey, body: { pattern: inboxAddress, action: 'store' } })
    ).json.data;
    const boundary = 'contract-boundary';
    const mail = [
      'From: Ada <ada@example.com>',
      `To: ${inboxAddress}`,
      'Subject: Contract',
      `Message-ID: <${randomUUID()}@example.com>`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello',
      `--${boundary}`,
      'Content-Type: application/octet-stream; name="data.bin"',
      'Content-Disposition: attachment; filename="data.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      'AAECAwQFBgc=',
      `--${boundary}--`,
      '',
    ].join('\r\n');
    const handed = await fetch(
      `${service.baseUrl}/cdn-cgi/handler/email?from=ada%40example.com&to=${encodeURIComponent(inboxAddress)}`,
      { method: 'POST', body: mail },
    );
    expect(handed.ok, await handed.text()).toBe(true);
    const inboxPath = `/api/v1/inbound?to=${encodeURIComponent(inboxAddress)}`;
    await expect
      .poll(async () => (await check('GET', '/api/v1/inbound', inboxPath, { token: mailKey })).json.data.total)
      .toBe(1);
    const received = (await check('GET', '/api/v1/inbound', inboxPath, { token: mailKey })).json.data.messages[0];
    await check('GET', '/api/v1/inbound', '/api/v1/inbound?since=yesterday', { token: mailKey });
    const messagePath = '/api/v1/inbound/{inboundId}';
    await check('GET', messagePath, `/api/v1/inbound/${received.id}`, { token: mailKey });
    await check('GET', messagePath, '/api/v1/inbound/inm_unknown', { token: mailKey });
    const rawPath = '/api/v1/inbound/{inboundId}/raw';
    await check('GET', rawPath, `/api/v1/inbound/${received.id}/raw`, { token: mailKey });
    await check('GET', rawPath, '/api/v1/inbound/inm_unknown/raw', { token: mailKey });
    const partPath = '/api/v1/inbound/{inboundId}/attachments/{index}';
    await check('GET', partPath, `/api/v1/inbound/${received.id}/attachments/0`, { token: mailKey });
    await check('GET', partPath, `/api/v1/inbound/${received.id}/attachments/1`, { token: mailKey });
    await check('DELETE', routePath, `${routesPath}/${mailRoute.id}`, { token: mailKey });

    // Listening sessions: the start as JSON, then the WebSocket itself
    const listenersPath = '/api/v1/webhook-listeners';
    const listener = (
      await check('POST', listenersPath, listenersPath, { token: mailKey, body: { events: ['email.sent'] } })
    ).json.data;
    await check('POST', listenersPath, listenersPath, { token: mailKey, body: { events: ['otp.sent'] } });
    await check('GET', listenersPath, listenersPath, { token: mailKey });
    await check('GET', listenersPath, listenersPath, {});
    const connectPath = '/api/v1/webhook-listeners/{listenerId}';
    await check('GET', connectPath, `/api/v1/webhook-listeners/${listener.listenerId}`, { token: mailKey });
    await checkUpgrade(connectPath, `/api/v1/webhook-listeners/${listener.listenerId}`, mailKey);
    await check('POST', '/api/v1/emails', '/api/v1/emails', { token: mailKey, body: { to } });
    await check('POST', '/api/v1/emails', '/api/v1/emails', {
      token: serverKey,
      body: { to, subject: 's', text: 't' },
    });
    await check('GET', '/api/v1/emails', '/api/v1/emails?page=1&limit=10', { token: mailKey });
    await check('GET', '/api/v1/emails', '/api/v1/emails?limit=0', { token: mailKey });
    const template = (
      await check('POST', '/api/v1/templates', '/api/v1/templates', {
        token: mailKey,
        body: { name: 't', subject: 'Hi {{name}}', textBody: 'Hello {{name}}' },
      })
    ).json.data;
    await check('POST', '/api/v1/templates', '/api/v1/templates', { token: mailKey, body: { name: 't' } });
    await check('GET', '/api/v1/templates', '/api/v1/templates', { token: mailKey });
    await check('GET', '/api/v1/templates', '/api/v1/templates', {});
    const one = '/api/v1/templates/{templateId}';
    await check('GET', one, `/api/v1/templates/${template.id}`, { token: mailKey });
    await check('GET', one, '/api/v1/templates/tpl_unknown', { token: mailKey });
    await check('PUT', one, `/api/v1/templates/${template.id}`, { token: mailKey, body: { name: 'renamed' } });
    await check('PUT', one, '/api/v1/templates/tpl_unknown', { token: mailKey, body: { name: 'renamed' } });
    await check('POST', '/api/v1/templates/send', '/api/v1/templates/send', {
      token: mailKey,
      body: { to, templateId: template.id, vars: { name: 'Ada' } },
    });
    await check('POST', '/api/v1/templates/send', '/api/v1/templates/send', {
      token: mailKey,
      body: { to, templateId: 'tpl_unknown' },
    });
    await check('POST', '/api/v1/templates/send-test', '/api/v1/templates/send-test', { token: mailKey, body: { to } });
    await check('POST', '/api/v1/templates/send-test', '/api/v1/templates/send-test', { token: mailKey, body: {} });
    await check('DELETE', one, `/api/v1/templates/${template.id}`, { token: mailKey });
    await check('DELETE', one, `/api/v1/templates/${template.id}`, { token: mailKey });

    // Instant OTP and its legacy aliases
    const otpTo = address('otp');
    const sent = (
      await check('POST', '/api/v1/instant-otp/send', '/api/v1/instant-otp/send', {
        token: token.token,
        body: { email: otpTo },
      })
    ).json.data;
    await check('POST', '/api/v1/instant-otp/send', '/api/v1/instant-otp/send', {
      token: token.token,
      body: { email: otpTo, otpDigits: 3 },
    });
    const config = '/api/v1/instant-otp/config';
    await check('GET', config, config, { token: challenged.token });
    await check('GET', config, config, { token: 'pc_otp_unknown' });
    await check('POST', '/api/v1/instant-otp/send', '/api/v1/instant-otp/send', {
      token: challenged.token,
      body: { email: address('challenged') },
    });
    await check('POST', '/api/v1/instant-otp/send', '/api/v1/instant-otp/send', {
      token: challenged.token,
      body: { email: address('challenged'), turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX' },
    });
    const instantResend = '/api/v1/instant-otp/resend';
    await check('POST', instantResend, instantResend, {
      token: token.token,
      body: { sessionId: sent.sessionId, email: otpTo },
    });
    await check('POST', instantResend, instantResend, {
      token: token.token,
      body: { sessionId: 'otp_x', email: otpTo },
    });
    const code = await codeFromInbox(otpTo);
    const wrong = code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);
    await check('POST', '/api/v1/instant-otp/verify', '/api/v1/instant-otp/verify', {
      token: token.token,
      body: { sessionId: sent.sessionId, email: otpTo, code: wrong },
    });
    await check('POST', '/api/v1/instant-otp/verify', '/api/v1/instant-otp/verify', {
      token: token.token,
      body: { sessionId: sent.sessionId, email: otpTo, code },
    });
    await check('POST', '/api/v1/instant-otp/verify', '/api/v1/instant-otp/verify', {
      token: token.token,
      body: { sessionId: sent.sessionId, email: otpTo, code },
    });
    const instantStatus = '/api/v1/instant-otp/sessions/{sessionId}';
    await check('GET', instantStatus, `/api/v1/instant-otp/sessions/${sent.sessionId}`, { token: serverKey });
    await check('GET', instantStatus, '/api/v1/instant-otp/sessions/otp_unknownunknownunknownunkn', {
      token: serverKey,
    });
    const secret = { 'X-Otp-Secret': token.analyticsSecret };
    await check('GET', '/api/v1/instant-otp/verifications', '/api/v1/instant-otp/verifications?limit=50', {
      token: token.token,
      headers: secret,
    });
    await check('GET', '/api/v1/instant-otp/verifications', '/api/v1/instant-otp/verifications', {
      token: token.token,
    });
    const legacyTo = address('legacy');
    const legacy = (
      await check('POST', '/api/v1/otp/send', '/api/v1/otp/send', { token: token.token, body: { email: legacyTo } })
    ).json.data;
    await check('POST', '/api/v1/otp/send', '/api/v1/otp/send', { token: mailKey, body: { email: legacyTo } });
    const legacyResend = '/api/v1/otp/resend';
    await check('POST', legacyResend, legacyResend, {
      token: token.token,
      body: { sessionId: legacy.sessionId, email: legacyTo },
    });
    await check('POST', legacyResend, legacyResend, { token: token.token, body: { sessionId: legacy.sessionId } });
    const legacyCode = await codeFromInbox(legacyTo);
    await check('POST', '/api/v1/otp/verify', '/api/v1/otp/verify', {
      token: token.token,
      body: { sessionId: legacy.sessionId, email: legacyTo, code: legacyCode },
    });
    await check('POST', '/api/v1/otp/verify', '/api/v1/otp/verify', {
      token: token.token,
      body: { sessionId: 'otp_unknown', email: legacyTo, code: legacyCode },
    });
    await check('GET', '/api/v1/otp/verifications', '/api/v1/otp/verifications', {
      token: token.token,
      headers: secret,
    });
    await check('GET', '/api/v1/otp/verifications', '/api/v1/otp/verifications', { token: serverKey, headers: secret });

    // Backend OTP
    const backendTo = address('backend');
    const backend = (
      await check('POST', '/api/v1/backend-otp/send', '/api/v1/backend-otp/send', {
        token: serverKey,
        body: { email: backendTo, subject: 'Code' },
      })
    ).json.data;
    await check('POST', '/api/v1/backend-otp/send', '/api/v1/backend-otp/send', {
      token: token.token,
      body: { email: backendTo },
    });
    const backendResend = '/api/v1/backend-otp/resend';
    await check('POST', backendResend, backendResend, {
      token: serverKey,
      body: { sessionId: backend.sessionId, email: backendTo },
    });
    await check('POST', backendResend, backendResend, { token: mailKey, body: { sessionId: 'x', email: backendTo } });
    const backendCode = await codeFromInbox(backendTo);
    await check('POST', '/api/v1/backend-otp/verify', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId: backend.sessionId, email: backendTo, code: backendCode },
    });
    await check('POST', '/api/v1/backend-otp/verify', '/api/v1/backend-otp/verify', {
      token: serverKey,
      body: { sessionId: backend.sessionId, email: backendTo, code: 'abc' },
    });
    await check('GET', '/api/v1/backend-otp/verifications', '/api/v1/backend-otp/verifications', { token: serverKey });
    await check('GET', '/api/v1/backend-otp/verifications', '/api/v1/backend-otp/verifications', { token: mailKey });

    // Email verification, its status route and the hosted page
    const evTo = address('ev');
    const ev = (
      await check('POST', '/api/v1/email-verification/send', '/api/v1/email-verification/send', {
        token: serverKey,
        body: { email: evTo, otpDigits: 8 },
      })
    ).json.data;
    await check('POST', '/api/v1/email-verification/send', '/api/v1/email-verification/send', {
      token: serverKey,
      body: { email: evTo, otpDigits: 11 },
    });
    const status = '/api/v1/email-verification/{sessionId}';
    await check('GET', status, `/api/v1/email-verification/${ev.sessionId}`, { token: serverKey });
    await check('GET', status, '/api/v1/email-verification/otp_unknownunknownunknownunkn', { token: serverKey });
    await check('GET', '/verify', `/verify?sessionId=${ev.sessionId}`);
    await check('GET', '/verify', '/verify?sessionId=otp_unknown');
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    await check('POST', '/verify', '/verify', {
      headers: form,
      raw: `sessionId=${ev.sessionId}&email=${encodeURIComponent(evTo)}&code=1`,
    });
    await check('POST', '/verify', '/verify', { headers: form, raw: `email=${'x'.repeat(5000)}` });
    const evResend = '/api/v1/email-verification/resend';
    await check('POST', evResend, evResend, { token: serverKey, body: { sessionId: ev.sessionId, email: evTo } });
    await check('POST', evResend, evResend, { token: serverKey, body: { sessionId: ev.sessionId, email: 'x' } });
    const evCode = await codeFromInbox(evTo);
    await check('POST', '/api/v1/email-verification/verify', '/api/v1/email-verification/verify', {
      token: serverKey,
      body: { sessionId: ev.sessionId, email: evTo, code: '00000000' === evCode ? '11111111' : '00000000' },
    });
    await check('POST', '/api/v1/email-verification/verify', '/api/v1/email-verification/verify', {
      token: serverKey,
      body: { sessionId: ev.sessionId, email: evTo, code: evCode },
    });
    await check('GET', status, `/api/v1/email-verification/${ev.sessionId}`, { token: serverKey });

    // Coverage: every documented operation was seen succeeding, and every one that lists errors was seen failing.
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const seen = [...validated].filter((v) => v.startsWith(`${method.toUpperCase()} ${path} `));
        // The documented success: a 2xx, or 101 for a WebSocket route.
        const success = '101' in operation.responses ? /\s101$/ : /\s2\d\d$/;
        expect(
          seen.some((v) => success.test(v)),
          `${method} ${path}: no success response validated`,
        ).toBe(true);
        const documentsErrors = Object.keys(operation.responses).some((status) => status >= '400' && status !== '500');
        if (documentsErrors)
          expect(
            seen.some((v) => /\s[45]\d\d$/.test(v)),
            `${method} ${path}: no error response validated`,
          ).toBe(true);
      }
    }
  });
});
