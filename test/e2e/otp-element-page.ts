// The <postcode-otp> element's test pages: served from an origin of their own (a site embedding the element, whose
// script comes from the service's origin), and what the tests read from them: the parts, the host's state, the events
// the element dispatched, and a stand-in for Cloudflare's Turnstile script (the machine has no internet).
import { createServer } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { freePort } from './local-service';

export type PageServer = {
  origin: string;
  /** Serves a document whose body is `body`; its address. */
  page(body: string): string;
  close(): Promise<void>;
};

/**
 * A site that follows the reader's light or dark scheme. Its canvas colours are spelled out: axe-core takes a page
 * without a background colour for white, whatever colour `color-scheme` paints it.
 */
const document = (body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<style>html { background: Canvas; color: CanvasText; }</style>
<title>postcode-otp test page</title>
</head>
<body>
${body}
</body>
</html>
`;

/** A tiny web site on a free port of the loopback: `/?page=N` is the N-th page given to `page`. */
export async function startPageServer(): Promise<PageServer> {
  const pages: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page.test');
    const body = url.pathname === '/' ? pages[Number(url.searchParams.get('page'))] : undefined;
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(document(body));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    page: (body) => `${origin}/?page=${pages.push(body) - 1}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type ElementOptions = { token: string; lang?: string; name?: string; src?: string; integrity?: string };

/** The script tag and the element, as a site embeds them (the script from `src`, by default the service's). */
export function elementMarkup(baseUrl: string, options: ElementOptions): string {
  const src = options.src ?? `${baseUrl}/sdk/v1/otp.js`;
  const integrity = options.integrity ? ` integrity="${options.integrity}" crossorigin="anonymous"` : '';
  const attributes = [
    `token="${options.token}"`,
    ...(options.lang ? [`lang="${options.lang}"`] : []),
    ...(options.name ? [`name="${options.name}"`] : []),
  ];
  return `<script type="module" src="${src}"${integrity}></script>\n<postcode-otp ${attributes.join(' ')}></postcode-otp>`;
}

/** Records the element's events (they bubble to the document) before any script of the page runs. */
const RECORD_EVENTS = `
  window.otpEvents = [];
  for (const type of ['sent', 'verified', 'error']) {
    document.addEventListener('postcode-otp:' + type, (event) => {
      window.otpEvents.push({ type, detail: event.detail, bubbles: event.bubbles, composed: event.composed });
    });
  }`;

/** A page of `context` at `url`, once the element shows its email step. */
export async function openElement(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.addInitScript(RECORD_EVENTS);
  await page.goto(url);
  await part(page, 'email-input').waitFor({ timeout: 10_000 });
  return page;
}

export const part = (page: Page, name: string) => page.locator(`postcode-otp [data-part="${name}"]`);
export const hostState = (page: Page) => page.locator('postcode-otp').getAttribute('data-state');
/** The `data-part` of the focused element (its tag name when it has none). */
export const focusedPart = (page: Page) =>
  page.evaluate('document.activeElement?.dataset?.part ?? document.activeElement?.tagName') as Promise<string>;
export const statusText = async (page: Page) => ((await part(page, 'status').textContent()) ?? '').trim();

export type OtpEvent = {
  type: 'sent' | 'verified' | 'error';
  detail: Record<string, unknown>;
  bubbles: boolean;
  composed: boolean;
};

export const otpEvents = async (page: Page, type: OtpEvent['type']) =>
  ((await page.evaluate('window.otpEvents')) as OtpEvent[]).filter((event) => event.type === type);

/** Waits for the `count`-th `postcode-otp:<type>` event; that event. */
export async function otpEvent(page: Page, type: OtpEvent['type'], count = 1): Promise<OtpEvent> {
  await expect
    .poll(async () => (await otpEvents(page, type)).length, { timeout: 15_000 })
    .toBeGreaterThanOrEqual(count);
  return (await otpEvents(page, type))[count - 1]!;
}

export const TURNSTILE_ANSWER = 'XXXX.DUMMY.TOKEN.XXXX';
const TURNSTILE_API = 'https://challenges.cloudflare.com/turnstile/v0/api.js';

/** A fake `window.turnstile`: each widget answers at once, and again on each reset; `window.turnstileCalls` records. */
const FAKE_TURNSTILE = `(() => {
  const calls = (window.turnstileCalls = { renders: [], resets: [] });
  const widgets = new Map();
  window.turnstile = {
    render(container, options) {
      const id = 'widget-' + (widgets.size + 1);
      widgets.set(id, options);
      const element = typeof container === 'string' ? document.querySelector(container) : container;
      calls.renders.push({ sitekey: options.sitekey, theme: options.theme, part: element?.dataset?.part ?? null,
        callbacks: ['callback', 'error-callback', 'expired-callback'].filter((k) => typeof options[k] === 'function') });
      queueMicrotask(() => options.callback(${JSON.stringify(TURNSTILE_ANSWER)}));
      return id;
    },
    reset(id) {
      calls.resets.push(id);
      const options = widgets.get(id);
      if (options) queueMicrotask(() => options.callback(${JSON.stringify(TURNSTILE_ANSWER)}));
    },
    remove(id) { widgets.delete(id); },
    getResponse() { return ${JSON.stringify(TURNSTILE_ANSWER)}; },
    ready(callback) { callback(); },
  };
})();`;

/** Serves the fake in place of Turnstile's script for every page of `context`; the addresses it was asked for. */
export async function fakeTurnstile(context: BrowserContext): Promise<string[]> {
  const requested: string[] = [];
  await context.route(`${TURNSTILE_API}*`, (route) => {
    requested.push(route.request().url());
    return route.fulfill({ contentType: 'text/javascript', body: FAKE_TURNSTILE });
  });
  return requested;
}
