// The one script of the dashboard (served from /dashboard/assets/preview.js, so the pages' policy allows no inline
// script): a template form's preview follows what is typed. It submits the form's preview buttons, whose
// `formaction` renders the unsaved fields into the sandboxed preview frames, half a second after the last key.
// One at a time: a form's second submission replaces the first before it starts, so each waits for its frame.
export const PREVIEW_SCRIPT = `
(() => {
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
