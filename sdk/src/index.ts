// postcode from TypeScript and JavaScript: `new Postcode(key, { baseUrl })`, one method per operation of the
// API, each resolving to { data, error, headers } and never throwing for an HTTP error. Web platform only (fetch,
// Headers, AbortSignal, Web Crypto): Workers, Node 20+, Deno, Bun and browsers alike.
import { type ClientOptions, type RequestOptions, Transport } from './http.js';
import { PagedList } from './pages.js';
import type { BodyOf, DataOf, OperationId, QueryOf } from './types.js';

export type { ClientOptions, PostcodeError, RequestOptions, Result } from './http.js';
export { PagedList, PostcodeRequestError } from './pages.js';
export type { BodyOf, DataOf, ErrorCode, OperationId, QueryOf, WebhookEvent, WebhookEventType } from './types.js';
export { verifyWebhook, WebhookVerificationError } from './webhooks.js';

const at = (template: string, ...ids: string[]) => {
  let i = 0;
  return template.replace(/\{\w+\}/g, () => encodeURIComponent(ids[i++] ?? ''));
};

type Items<O extends OperationId, K extends string> = DataOf<O> extends { [P in K]: (infer I)[] } ? I : never;
type Paged = { nextCursor: string | null };

/** The calls of one key. */
export class Postcode {
  readonly #t: Transport;

  constructor(key: string, options: ClientOptions) {
    this.#t = new Transport(key, options);
  }

  #get<O extends OperationId>(path: string, query?: QueryOf<O>, options?: RequestOptions) {
    return this.#t.request<DataOf<O>>('GET', path, { query: query as Record<string, unknown>, ...options });
  }

  #call<O extends OperationId>(method: string, path: string, body?: BodyOf<O>, options: RequestOptions = {}) {
    return this.#t.request<DataOf<O>>(method, path, { body, ...options });
  }

  #send<O extends OperationId>(path: string, body: BodyOf<O>, options: RequestOptions = {}) {
    return this.#t.request<DataOf<O>>('POST', path, { body, send: true, ...options });
  }

  #list<O extends OperationId, K extends string>(path: string, key: K, query: QueryOf<O> | undefined) {
    return new PagedList<DataOf<O> & Paged, Items<O, K>>(
      (after) => this.#get<O>(path, { ...query, ...(after ? { after } : {}) } as QueryOf<O>) as never,
      (page) => (page as unknown as Record<K, Items<O, K>[]>)[key],
    );
  }

  readonly emails = {
    /** Queues an email; retried with one Idempotency-Key (`options.idempotencyKey`, else generated). */
    send: (email: BodyOf<'postApiV1Emails'>, options?: RequestOptions) =>
      this.#send<'postApiV1Emails'>('/api/v1/emails', email, options),
    batch: (emails: BodyOf<'postApiV1EmailsBatch'>, options?: RequestOptions) =>
      this.#send<'postApiV1EmailsBatch'>('/api/v1/emails/batch', emails, options),
    get: (emailId: string) => this.#get<'getApiV1EmailsEmailId'>(at('/api/v1/emails/{id}', emailId)),
    list: (query?: QueryOf<'getApiV1Emails'>) =>
      this.#list<'getApiV1Emails', 'emails'>('/api/v1/emails', 'emails', query),
    cancel: (emailId: string) =>
      this.#call<'postApiV1EmailsEmailIdCancel'>('POST', at('/api/v1/emails/{id}/cancel', emailId)),
    reschedule: (emailId: string, change: BodyOf<'patchApiV1EmailsEmailId'>) =>
      this.#call<'patchApiV1EmailsEmailId'>('PATCH', at('/api/v1/emails/{id}', emailId), change),
  };

  readonly templates = {
    create: (template: BodyOf<'postApiV1Templates'>) =>
      this.#call<'postApiV1Templates'>('POST', '/api/v1/templates', template),
    get: (templateId: string) => this.#get<'getApiV1TemplatesTemplateId'>(at('/api/v1/templates/{id}', templateId)),
    list: (query?: QueryOf<'getApiV1Templates'>) =>
      this.#list<'getApiV1Templates', 'items'>('/api/v1/templates', 'items', query),
    update: (templateId: string, template: BodyOf<'putApiV1TemplatesTemplateId'>) =>
      this.#call<'putApiV1TemplatesTemplateId'>('PUT', at('/api/v1/templates/{id}', templateId), template),
    remove: (templateId: string) =>
      this.#call<'deleteApiV1TemplatesTemplateId'>('DELETE', at('/api/v1/templates/{id}', templateId)),
    /** Queues an email from a template; retried with one Idempotency-Key. */
    send: (request: BodyOf<'postApiV1TemplatesSend'>, options?: RequestOptions) =>
      this.#send<'postApiV1TemplatesSend'>('/api/v1/templates/send', request, options),
    sendTest: (request: BodyOf<'postApiV1TemplatesSendTest'>, options?: RequestOptions) =>
      this.#send<'postApiV1TemplatesSendTest'>('/api/v1/templates/send-test', request, options),
  };

  readonly domains = {
    create: (domain: BodyOf<'postApiV1Domains'>) => this.#call<'postApiV1Domains'>('POST', '/api/v1/domains', domain),
    get: (domainId: string) => this.#get<'getApiV1DomainsDomainId'>(at('/api/v1/domains/{id}', domainId)),
    list: (query?: QueryOf<'getApiV1Domains'>) =>
      this.#list<'getApiV1Domains', 'domains'>('/api/v1/domains', 'domains', query),
    verify: (domainId: string) =>
      this.#call<'postApiV1DomainsDomainIdVerify'>('POST', at('/api/v1/domains/{id}/verify', domainId)),
    rotateDkim: (domainId: string) =>
      this.#call<'postApiV1DomainsDomainIdRotateDkim'>('POST', at('/api/v1/domains/{id}/rotate-dkim', domainId)),
    /** Receive mail at the domain, or at `subdomain`.domain (the domain must sign first). */
    enableInbound: (domainId: string, body: BodyOf<'postApiV1DomainsDomainIdInbound'> = {}) =>
      this.#call<'postApiV1DomainsDomainIdInbound'>('POST', at('/api/v1/domains/{id}/inbound', domainId), body),
    disableInbound: (domainId: string) =>
      this.#call<'deleteApiV1DomainsDomainIdInbound'>('DELETE', at('/api/v1/domains/{id}/inbound', domainId)),
    remove: (domainId: string) =>
      this.#call<'deleteApiV1DomainsDomainId'>('DELETE', at('/api/v1/domains/{id}', domainId)),
  };

  readonly senders = {
    create: (sender: BodyOf<'postApiV1Senders'>) => this.#call<'postApiV1Senders'>('POST', '/api/v1/senders', sender),
    get: (senderId: string) => this.#get<'getApiV1SendersSenderId'>(at('/api/v1/senders/{id}', senderId)),
    list: (query?: QueryOf<'getApiV1Senders'>) =>
      this.#list<'getApiV1Senders', 'senders'>('/api/v1/senders', 'senders', query),
    resend: (senderId: string) =>
      this.#call<'postApiV1SendersSenderIdResend'>('POST', at('/api/v1/senders/{id}/resend', senderId)),
    remove: (senderId: string) =>
      this.#call<'deleteApiV1SendersSenderId'>('DELETE', at('/api/v1/senders/{id}', senderId)),
  };

  readonly suppressions = {
    add: (suppression: BodyOf<'postApiV1Suppressions'>) =>
      this.#call<'postApiV1Suppressions'>('POST', '/api/v1/suppressions', suppression),
    list: (query?: QueryOf<'getApiV1Suppressions'>) =>
      this.#list<'getApiV1Suppressions', 'suppressions'>('/api/v1/suppressions', 'suppressions', query),
    remove: (email: string) =>
      this.#call<'deleteApiV1SuppressionsEmail'>('DELETE', at('/api/v1/suppressions/{email}', email)),
  };

  readonly webhooks = {
    create: (webhook: BodyOf<'postApiV1Webhooks'>) =>
      this.#call<'postApiV1Webhooks'>('POST', '/api/v1/webhooks', webhook),
    get: (webhookId: string) => this.#get<'getApiV1WebhooksWebhookId'>(at('/api/v1/webhooks/{id}', webhookId)),
    list: () => this.#get<'getApiV1Webhooks'>('/api/v1/webhooks'),
    update: (webhookId: string, change: BodyOf<'patchApiV1WebhooksWebhookId'>) =>
      this.#call<'patchApiV1WebhooksWebhookId'>('PATCH', at('/api/v1/webhooks/{id}', webhookId), change),
    remove: (webhookId: string) =>
      this.#call<'deleteApiV1WebhooksWebhookId'>('DELETE', at('/api/v1/webhooks/{id}', webhookId)),
    test: (webhookId: string, request?: BodyOf<'postApiV1WebhooksWebhookIdTest'>) =>
      this.#call<'postApiV1WebhooksWebhookIdTest'>('POST', at('/api/v1/webhooks/{id}/test', webhookId), request),
    deliveries: (webhookId: string, query?: QueryOf<'getApiV1WebhooksWebhookIdDeliveries'>) =>
      this.#list<'getApiV1WebhooksWebhookIdDeliveries', 'deliveries'>(
        at('/api/v1/webhooks/{id}/deliveries', webhookId),
        'deliveries',
        query,
      ),
    /**
     * Starts a listening session: the account's events come into a WebSocket at `connectUrl` (what
     * `postcode webhooks listen` holds), signed with the session's own secret.
     */
    openListener: (request: BodyOf<'postApiV1WebhookListeners'> = {}) =>
      this.#call<'postApiV1WebhookListeners'>('POST', '/api/v1/webhook-listeners', request),
    listeners: () => this.#get<'getApiV1WebhookListeners'>('/api/v1/webhook-listeners'),
    retryDelivery: (webhookId: string, deliveryId: string) =>
      this.#call<'postApiV1WebhooksWebhookIdDeliveriesDeliveryIdRetry'>(
        'POST',
        at('/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', webhookId, deliveryId),
      ),
  };

  /** Receiving mail: the account's receiving domains and its inbound routes (a live mail key). */
  readonly inbound = {
    /** Received mail, newest first (`for await` follows the cursor). The bytes: GET `rawUrl`/`url` with the key. */
    list: (query?: QueryOf<'getApiV1Inbound'>) =>
      this.#list<'getApiV1Inbound', 'messages'>('/api/v1/inbound', 'messages', query),
    get: (inboundId: string) => this.#get<'getApiV1InboundInboundId'>(at('/api/v1/inbound/{id}', inboundId)),
    addresses: () => this.#get<'getApiV1InboundAddresses'>('/api/v1/inbound/addresses'),
    routes: {
      create: (route: BodyOf<'postApiV1InboundRoutes'>) =>
        this.#call<'postApiV1InboundRoutes'>('POST', '/api/v1/inbound/routes', route),
      list: () => this.#get<'getApiV1InboundRoutes'>('/api/v1/inbound/routes'),
      get: (routeId: string) => this.#get<'getApiV1InboundRoutesRouteId'>(at('/api/v1/inbound/routes/{id}', routeId)),
      update: (routeId: string, change: BodyOf<'patchApiV1InboundRoutesRouteId'>) =>
        this.#call<'patchApiV1InboundRoutesRouteId'>('PATCH', at('/api/v1/inbound/routes/{id}', routeId), change),
      remove: (routeId: string) =>
        this.#call<'deleteApiV1InboundRoutesRouteId'>('DELETE', at('/api/v1/inbound/routes/{id}', routeId)),
    },
  };

  /** One-time codes with a server key. OTP sends are never repeated after a 5xx (that could mail two codes). */
  readonly otp = {
    backend: {
      send: (request: BodyOf<'postApiV1BackendOtpSend'>) =>
        this.#call<'postApiV1BackendOtpSend'>('POST', '/api/v1/backend-otp/send', request),
      verify: (request: BodyOf<'postApiV1BackendOtpVerify'>) =>
        this.#call<'postApiV1BackendOtpVerify'>('POST', '/api/v1/backend-otp/verify', request),
      resend: (request: BodyOf<'postApiV1BackendOtpResend'>) =>
        this.#call<'postApiV1BackendOtpResend'>('POST', '/api/v1/backend-otp/resend', request),
      verifications: (query?: QueryOf<'getApiV1BackendOtpVerifications'>) =>
        this.#get<'getApiV1BackendOtpVerifications'>('/api/v1/backend-otp/verifications', query),
    },
    emailVerification: {
      send: (request: BodyOf<'postApiV1EmailVerificationSend'>) =>
        this.#call<'postApiV1EmailVerificationSend'>('POST', '/api/v1/email-verification/send', request),
      verify: (request: BodyOf<'postApiV1EmailVerificationVerify'>) =>
        this.#call<'postApiV1EmailVerificationVerify'>('POST', '/api/v1/email-verification/verify', request),
      resend: (request: BodyOf<'postApiV1EmailVerificationResend'>) =>
        this.#call<'postApiV1EmailVerificationResend'>('POST', '/api/v1/email-verification/resend', request),
      get: (sessionId: string) =>
        this.#get<'getApiV1EmailVerificationSessionId'>(at('/api/v1/email-verification/{id}', sessionId)),
    },
    instant: {
      /** A session a browser started (e.g. with `<postcode-otp>`), confirmed by the site's backend. */
      session: (sessionId: string) =>
        this.#get<'getApiV1InstantOtpSessionsSessionId'>(at('/api/v1/instant-otp/sessions/{id}', sessionId)),
    },
  };

  readonly metrics = {
    get: (query?: QueryOf<'getApiV1Metrics'>) => this.#get<'getApiV1Metrics'>('/api/v1/metrics', query),
  };
}
