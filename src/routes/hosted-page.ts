// What postcode's hosted pages (the verify page, the sender confirmation page) answer with besides their HTML.

/** The document's content for an HTML answer. */
export const HTML = { 'text/html': { schema: { type: 'string' as const } } };

/** A hosted page's headers: its Content-Security-Policy, never framed, sniffed, cached or sent as a referrer. */
export const pageHeaders = (contentSecurityPolicy: string): Record<string, string> => ({
  'Content-Security-Policy': `${contentSecurityPolicy}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
});
