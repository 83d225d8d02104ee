// The one script of the dashboard, served from /dashboard/assets/dashboard.js (the pages' policy allows no inline
// script), on the pages that need it:
// - a template form's preview follows what is typed: it submits the form's preview buttons, whose `formaction`
//   renders the unsaved fields into the sandboxed preview frames, half a second after the last key; one at a
//   time, because a form's second submission replaces the first before it starts;
// - a copy button (`data-copy`) puts its value on the clipboard and says so.
export const DASHBOARD_SCRIPT = `
(() => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      await navigator.clipboard.writeText(button.dataset.copy);
      button.textContent = 'Copied';
      setTimeout(() => { button.textContent = 'Copy'; }, 2000);
    });
  }
  const form = document.querySelector('form[data-live-preview]');
  if (!form) return;
  const buttons = [...form.querySelectorAll('button[data-preview]')];
  const loaded = (button) =>
    new Promise((resolve) => {
      const frame = document.querySelector('iframe[name="' + button.formTarget + '"]');
      frame.addEventListener('load', resolve, { once: true });
      setTimeout(resolve, 3000);
      form.requestSubmit(button);
    });
  let timer;
  let running = Promise.resolve();
  const refresh = () => {
    running = running.then(async () => {
      for (const button of buttons) await loaded(button);
    });
  };
  form.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 500);
  });
  refresh();
})();
`;

/** Where the page's script is served. */
export const SCRIPT_PATH = '/dashboard/assets/dashboard.js';
