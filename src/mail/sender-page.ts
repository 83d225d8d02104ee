// The hosted page that confirms a sender: one button (a POST), the result, or why the link does not work.
// No script; a style with a nonce.
import { escapeHtml } from './template';

export type SenderPageState =
  | { kind: 'confirm'; email: string; token: string }
  | { kind: 'confirmed'; email: string }
  | { kind: 'invalid' };

const TEXT: Record<SenderPageState['kind'], { title: string }> = {
  confirm: { title: 'Confirm this sender' },
  confirmed: { title: 'Sender confirmed' },
  invalid: { title: 'This link does not work' },
};

function content(state: SenderPageState): string {
  switch (state.kind) {
    case 'confirm':
      return `<p>Press the button to let this account send email as <strong>${escapeHtml(state.email)}</strong>.</p>
<form method="post" action="/confirm-sender"><input type="hidden" name="token" value="${escapeHtml(state.token)}"><button type="submit">Confirm</button></form>`;
    case 'confirmed':
      return `<p><strong>${escapeHtml(state.email)}</strong> is now a verified sender. You can close this page.</p>`;
    case 'invalid':
      return '<p>The link is unknown, was used already, or is older than 24 hours. Ask for a new confirmation mail.</p>';
  }
}

export function renderSenderPage(state: SenderPageState, nonce: string): string {
  const { title } = TEXT[state.kind];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title>
<style nonce="${nonce}">body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a;background:#fff}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:.4rem;background:#1f5eff;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #000;outline-offset:2px}
@media (prefers-color-scheme:dark){body{color:#eee;background:#121212}button{background:#4f7dff}button:focus-visible{outline-color:#fff}}</style>
</head><body><main><h1>${title}</h1>
${content(state)}
</main></body></html>`;
}
