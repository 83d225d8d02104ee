// <postcode-otp>: a sign-in by emailed code, for any page, served by the postcode Worker at /sdk/v1/otp.js.
// No dependencies and no build step: light DOM (password managers and the OS fill its fields), form-associated
// (a site's form cannot submit until the code is verified), one code field with autocomplete="one-time-code".
// Attributes: token (a public OTP token), lang, name (the form field), base-url (default: where this came from).
// Events: postcode-otp:sent, postcode-otp:verified ({ sessionId, email }), postcode-otp:error ({ code, message }).
// The Worker serves this file as written: scripts/build-browser.mjs gzips it and records its hashes (at install,
// `npm start` and every vitest run; after an edit, run it before `wrangler dev` or `wrangler deploy`).

const ORIGIN = new URL(import.meta.url).origin;
const TURNSTILE_API = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

/** The element's words in the languages of the hosted page; {n}, {email} are filled in. */
// biome-ignore format: one row of words per language
const TEXT = {
  en: ['Email address', 'Send code', 'Code from the email', 'Verify', 'Resend code', 'Resend in {n} s', 'Use another email', 'We sent a code to {email}.', 'Email verified.', 'That code is not right. Check it and try again.', 'Too many wrong codes. Ask for a new code.', 'This code has expired. Ask for a new one.', 'Too many attempts. Try again in {n} s.', 'Enter a valid email address.', 'Complete the check first.', 'The check failed. Try again.', 'Codes cannot be sent to this address.', 'Something went wrong. Try again.', 'Verify your email address first.', 'Sending…'],
  de: ['E-Mail-Adresse', 'Code senden', 'Code aus der E-Mail', 'Bestätigen', 'Code erneut senden', 'Erneut senden in {n} s', 'Andere E-Mail verwenden', 'Wir haben einen Code an {email} gesendet.', 'E-Mail bestätigt.', 'Der Code stimmt nicht. Prüfen Sie ihn und versuchen Sie es erneut.', 'Zu viele falsche Codes. Fordern Sie einen neuen Code an.', 'Dieser Code ist abgelaufen. Fordern Sie einen neuen an.', 'Zu viele Versuche. Versuchen Sie es in {n} s erneut.', 'Geben Sie eine gültige E-Mail-Adresse ein.', 'Schließen Sie zuerst die Prüfung ab.', 'Die Prüfung ist fehlgeschlagen. Versuchen Sie es erneut.', 'An diese Adresse können keine Codes gesendet werden.', 'Etwas ist schiefgelaufen. Versuchen Sie es erneut.', 'Bestätigen Sie zuerst Ihre E-Mail-Adresse.', 'Wird gesendet…'],
  fr: ['Adresse e-mail', 'Envoyer le code', 'Code reçu par e-mail', 'Vérifier', 'Renvoyer le code', 'Renvoyer dans {n} s', 'Utiliser une autre adresse', 'Nous avons envoyé un code à {email}.', 'Adresse e-mail vérifiée.', 'Ce code est incorrect. Vérifiez-le et réessayez.', 'Trop de codes incorrects. Demandez un nouveau code.', 'Ce code a expiré. Demandez-en un nouveau.', 'Trop de tentatives. Réessayez dans {n} s.', 'Saisissez une adresse e-mail valide.', "Terminez d'abord la vérification.", 'La vérification a échoué. Réessayez.', 'Impossible d’envoyer des codes à cette adresse.', 'Une erreur est survenue. Réessayez.', "Vérifiez d'abord votre adresse e-mail.", 'Envoi…'],
  es: ['Correo electrónico', 'Enviar código', 'Código del correo', 'Verificar', 'Reenviar código', 'Reenviar en {n} s', 'Usar otro correo', 'Enviamos un código a {email}.', 'Correo verificado.', 'El código no es correcto. Revísalo e inténtalo de nuevo.', 'Demasiados códigos incorrectos. Pide un código nuevo.', 'Este código ha caducado. Pide uno nuevo.', 'Demasiados intentos. Inténtalo de nuevo en {n} s.', 'Introduce un correo electrónico válido.', 'Completa primero la comprobación.', 'La comprobación ha fallado. Inténtalo de nuevo.', 'No se pueden enviar códigos a esta dirección.', 'Algo salió mal. Inténtalo de nuevo.', 'Verifica primero tu correo electrónico.', 'Enviando…'],
  pt: ['Endereço de e-mail', 'Enviar código', 'Código do e-mail', 'Verificar', 'Reenviar código', 'Reenviar em {n} s', 'Usar outro e-mail', 'Enviámos um código para {email}.', 'E-mail verificado.', 'Esse código não está correto. Verifique e tente novamente.', 'Demasiados códigos errados. Peça um novo código.', 'Este código expirou. Peça um novo.', 'Demasiadas tentativas. Tente novamente em {n} s.', 'Introduza um endereço de e-mail válido.', 'Conclua primeiro a verificação.', 'A verificação falhou. Tente novamente.', 'Não é possível enviar códigos para este endereço.', 'Algo correu mal. Tente novamente.', 'Verifique primeiro o seu endereço de e-mail.', 'A enviar…'],
  it: ['Indirizzo email', 'Invia codice', "Codice dall'email", 'Verifica', 'Invia di nuovo', 'Invia di nuovo tra {n} s', "Usa un'altra email", 'Abbiamo inviato un codice a {email}.', 'Email verificata.', 'Il codice non è corretto. Controllalo e riprova.', 'Troppi codici errati. Chiedi un nuovo codice.', 'Questo codice è scaduto. Chiedine uno nuovo.', 'Troppi tentativi. Riprova tra {n} s.', 'Inserisci un indirizzo email valido.', 'Completa prima la verifica.', 'La verifica non è riuscita. Riprova.', 'Non è possibile inviare codici a questo indirizzo.', 'Qualcosa è andato storto. Riprova.', 'Verifica prima il tuo indirizzo email.', 'Invio…'],
  nl: ['E-mailadres', 'Code versturen', 'Code uit de e-mail', 'Bevestigen', 'Code opnieuw versturen', 'Opnieuw versturen over {n} s', 'Ander e-mailadres gebruiken', 'We hebben een code gestuurd naar {email}.', 'E-mailadres bevestigd.', 'Die code klopt niet. Controleer hem en probeer het opnieuw.', 'Te veel verkeerde codes. Vraag een nieuwe code aan.', 'Deze code is verlopen. Vraag een nieuwe aan.', 'Te veel pogingen. Probeer het over {n} s opnieuw.', 'Vul een geldig e-mailadres in.', 'Voltooi eerst de controle.', 'De controle is mislukt. Probeer het opnieuw.', 'Naar dit adres kunnen geen codes worden gestuurd.', 'Er ging iets mis. Probeer het opnieuw.', 'Bevestig eerst je e-mailadres.', 'Versturen…'],
  ja: ['メールアドレス', 'コードを送信', 'メールに記載のコード', '確認', 'コードを再送信', '{n} 秒後に再送信', '別のメールアドレスを使う', '{email} にコードを送信しました。', 'メールアドレスを確認しました。', 'コードが正しくありません。確認してもう一度お試しください。', '誤ったコードが多すぎます。新しいコードを請求してください。', 'このコードは期限切れです。新しいコードを請求してください。', '試行回数が多すぎます。{n} 秒後にもう一度お試しください。', '有効なメールアドレスを入力してください。', '先に確認を完了してください。', '確認に失敗しました。もう一度お試しください。', 'このアドレスにはコードを送信できません。', '問題が発生しました。もう一度お試しください。', '先にメールアドレスを確認してください。', '送信中…'],
  zh: ['电子邮件地址', '发送验证码', '邮件中的验证码', '验证', '重新发送验证码', '{n} 秒后可重新发送', '使用其他邮箱', '我们已向 {email} 发送验证码。', '邮箱已验证。', '验证码不正确，请检查后重试。', '错误次数过多，请重新获取验证码。', '验证码已过期，请重新获取。', '尝试次数过多，请在 {n} 秒后重试。', '请输入有效的电子邮件地址。', '请先完成人机验证。', '人机验证失败，请重试。', '无法向此地址发送验证码。', '出了点问题，请重试。', '请先验证您的电子邮件地址。', '正在发送…'],
};
// biome-ignore format: in the order of each language's row
const KEYS = ['emailLabel', 'send', 'codeLabel', 'verify', 'resend', 'resendIn', 'changeEmail', 'sentTo', 'verified', 'wrongCode', 'locked', 'expired', 'rateLimited', 'invalidEmail', 'challenge', 'challengeFailed', 'notAllowed', 'error', 'verifyFirst', 'sending'];

/** Styles with no specificity (`:where`), so any rule of the site wins; themed through custom properties. */
const STYLE = `:where(postcode-otp){display:block;font:inherit;color:var(--postcode-otp-text,inherit);max-width:100%}
:where(postcode-otp [data-part$="-step"],postcode-otp [data-part=done]){display:grid;gap:var(--postcode-otp-gap,.5rem)}
:where(postcode-otp [hidden]){display:none}
:where(postcode-otp input){font:inherit;box-sizing:border-box;width:100%;min-height:2.75rem;padding:.5rem .75rem;border:1px solid var(--postcode-otp-border,#767676);border-radius:var(--postcode-otp-radius,.375rem);background:var(--postcode-otp-field,Field);color:var(--postcode-otp-field-text,FieldText)}
:where(postcode-otp [data-part=code-input]){letter-spacing:.3em;font-variant-numeric:tabular-nums}
:where(postcode-otp button){font:inherit;min-height:2.75rem;padding:.5rem 1rem;border-radius:var(--postcode-otp-radius,.375rem);cursor:pointer}
:where(postcode-otp [data-part=send],postcode-otp [data-part=verify]){border:0;background:var(--postcode-otp-accent,light-dark(#3647c4,#9aa8ff));color:var(--postcode-otp-accent-text,light-dark(#fff,#10173d))}
:where(postcode-otp [data-part=resend],postcode-otp [data-part=change-email]){border:0;background:none;color:var(--postcode-otp-link,LinkText);text-decoration:underline;padding-inline:0;justify-self:start}
:where(postcode-otp button:disabled){cursor:default;opacity:.65}
:where(postcode-otp :focus-visible){outline:2px solid var(--postcode-otp-accent,light-dark(#3647c4,#9aa8ff));outline-offset:2px}
:where(postcode-otp [data-part=status]){margin:0;min-height:1.5em}
:where(postcode-otp[data-tone=error] [data-part=status]){color:var(--postcode-otp-error,light-dark(#b3261e,#ffb4ab))}`;

/** Digits of a typed or pasted code: spaces, dashes and full-width digits (０-９) allowed. */
export const normaliseCode = (value) =>
  value.replace(/[\uff10-\uff19]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0xfee0)).replace(/\D/g, '');

let turnstileLoading;
const loadTurnstile = () =>
  (turnstileLoading ??= new Promise((resolve, reject) => {
    if (window.turnstile) return resolve(window.turnstile);
    const script = Object.assign(document.createElement('script'), { src: TURNSTILE_API, async: true });
    script.onload = () => resolve(window.turnstile);
    script.onerror = () => reject(new Error('Turnstile did not load'));
    document.head.append(script);
  }));

let ids = 0;

class PostcodeOtp extends HTMLElement {
  static formAssociated = true;
  static observedAttributes = ['lang'];

  #internals = this.attachInternals();
  #config;
  #session;
  #widget;
  #answer;
  #timer;
  #parts = {};

  connectedCallback() {
    if (this.#parts.status) return;
    if (!document.getElementById('postcode-otp-style')) {
      document.head.append(
        Object.assign(document.createElement('style'), { id: 'postcode-otp-style', textContent: STYLE }),
      );
    }
    this.#render();
    this.#config = this.#call('GET', 'config').then(({ data }) => data ?? { turnstile: null, codeLength: 6 });
    this.#config.then((config) => config.turnstile && this.#challenge(config.turnstile.siteKey));
  }

  disconnectedCallback() {
    clearInterval(this.#timer);
  }

  attributeChangedCallback() {
    if (this.#parts.status) this.#label();
  }

  get #text() {
    const lang = (this.getAttribute('lang') || document.documentElement.lang || 'en').slice(0, 2).toLowerCase();
    const words = TEXT[lang] ?? TEXT.en;
    return Object.fromEntries(KEYS.map((key, i) => [key, words[i]]));
  }

  #say(key, values = {}, tone = 'info') {
    const text = this.#text[key].replace(/\{(\w+)\}/g, (_, name) => values[name] ?? '');
    this.#parts.status.textContent = text;
    this.dataset.tone = tone;
    return text;
  }

  #render() {
    const id = `postcode-otp-${++ids}`;
    this.innerHTML = `<div data-part="email-step"><label data-part="email-label" for="${id}-email"></label>
<input data-part="email-input" id="${id}-email" type="email" autocomplete="email" required aria-describedby="${id}-status">
<div data-part="challenge" hidden></div><button data-part="send" type="button"></button></div>
<div data-part="code-step" hidden><p data-part="sent-to" id="${id}-sent"></p><label data-part="code-label" for="${id}-code"></label>
<input data-part="code-input" id="${id}-code" autocomplete="one-time-code" inputmode="numeric" spellcheck="false" aria-describedby="${id}-sent ${id}-status">
<button data-part="verify" type="button"></button><button data-part="resend" type="button"></button>
<button data-part="change-email" type="button"></button></div>
<p data-part="done" hidden></p><p data-part="status" id="${id}-status" role="status" aria-live="polite"></p>`;
    for (const part of this.querySelectorAll('[data-part]')) this.#parts[part.dataset.part] = part;
    const p = this.#parts;
    p.send.onclick = () => this.#send();
    p.verify.onclick = () => this.#verify();
    p.resend.onclick = () => this.#send(true);
    p['change-email'].onclick = () => this.#step('email');
    p['email-input'].onkeydown = (event) => this.#onEnter(event, () => this.#send());
    p['code-input'].onkeydown = (event) => this.#onEnter(event, () => this.#verify());
    p['code-input'].oninput = () => this.#typed();
    this.#step('email');
  }

  /** Enter acts on the element's own step: the site's form is never submitted from here. */
  #onEnter(event, act) {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    act();
  }

  #label() {
    const t = this.#text;
    const p = this.#parts;
    p['email-label'].textContent = t.emailLabel;
    p.send.textContent = t.send;
    p['code-label'].textContent = t.codeLabel;
    p.verify.textContent = t.verify;
    p['change-email'].textContent = t.changeEmail;
    p.done.textContent = t.verified;
    if (!p.resend.disabled) p.resend.textContent = t.resend;
    if (this.#session) p['sent-to'].textContent = t.sentTo.replace('{email}', this.#session.email);
    if (this.dataset.state !== 'verified')
      this.#internals.setValidity({ customError: true }, t.verifyFirst, p['email-input']);
  }

  #step(state) {
    const p = this.#parts;
    this.dataset.state = state;
    p['email-step'].hidden = state !== 'email';
    p['code-step'].hidden = state !== 'code';
    p.done.hidden = state !== 'verified';
    if (state === 'email') this.#session = undefined;
    this.#label();
  }

  #challenge(siteKey) {
    const box = this.#parts.challenge;
    box.hidden = false;
    loadTurnstile()
      .then((turnstile) => {
        this.#widget = turnstile.render(box, {
          sitekey: siteKey,
          theme: 'auto',
          language: this.getAttribute('lang') || 'auto',
          callback: (answer) => (this.#answer = answer),
          'expired-callback': () => (this.#answer = undefined),
          'error-callback': () => (this.#answer = undefined),
        });
      })
      .catch(() => this.#fail({ code: 'CHALLENGE_UNAVAILABLE' }, 'challengeFailed'));
  }

  async #call(method, path, body) {
    const base = (this.getAttribute('base-url') || ORIGIN).replace(/\/$/, '');
    try {
      const res = await fetch(`${base}/api/v1/instant-otp/${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.getAttribute('token')}`, 'Content-Type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      const json = await res.json().catch(() => ({}));
      const wait = Number(res.headers.get('Retry-After')) || json.error?.retryAfterSeconds;
      return res.ok ? json : { error: { ...json.error, status: res.status, retryAfterSeconds: wait || undefined } };
    } catch {
      return { error: { code: 'NETWORK', status: 0 } };
    }
  }

  #emit(name, detail) {
    this.dispatchEvent(new CustomEvent(`postcode-otp:${name}`, { detail, bubbles: true, composed: true }));
  }

  #fail(error, key) {
    const message = this.#say(key, { n: error.retryAfterSeconds ?? '' }, 'error');
    this.#emit('error', { code: error.code, message, retryAfterSeconds: error.retryAfterSeconds });
  }

  async #send(again = false) {
    const p = this.#parts;
    const email = again ? this.#session.email : p['email-input'].value.trim();
    if (!again && !p['email-input'].checkValidity()) return this.#fail({ code: 'INVALID_INPUT' }, 'invalidEmail');
    const config = await this.#config;
    if (config.turnstile && !this.#answer) return this.#fail({ code: 'CHALLENGE_REQUIRED' }, 'challenge');
    const button = again ? p.resend : p.send;
    button.disabled = true;
    this.#say('sending');
    const turnstileToken = this.#answer;
    this.#answer = undefined;
    if (this.#widget !== undefined) window.turnstile.reset(this.#widget);
    const lang = this.getAttribute('lang');
    const body = again
      ? { sessionId: this.#session.sessionId, email, turnstileToken }
      : { email, turnstileToken, ...(lang ? { locale: lang } : {}) };
    const { data, error } = await this.#call('POST', again ? 'resend' : 'send', body);
    button.disabled = false;
    if (error) return this.#sendFailed(error, again);
    this.#session = { sessionId: data.sessionId, email };
    this.#step('code');
    // The sent-to line describes the code field, which takes focus: the status is left for what comes next.
    this.#parts.status.textContent = '';
    p['code-input'].value = '';
    p['code-input'].focus();
    this.#emit('sent', { sessionId: data.sessionId, email });
  }

  #sendFailed(error, again) {
    if (error.status === 429) {
      this.#countdown(error.retryAfterSeconds ?? 30);
      return this.#fail(error, 'rateLimited');
    }
    if (again && error.code === 'SESSION_NOT_FOUND') return this.#fail(error, 'expired');
    const key =
      { CHALLENGE_FAILED: 'challengeFailed', ADDRESS_NOT_ALLOWED: 'notAllowed', INVALID_INPUT: 'invalidEmail' }[
        error.code
      ] ?? 'error';
    this.#fail(error, key);
  }

  /** The resend control waits out a 429, counting down. */
  #countdown(seconds) {
    const resend = this.#parts.resend;
    const send = this.#parts.send;
    const until = Date.now() + seconds * 1000;
    clearInterval(this.#timer);
    const tick = () => {
      const left = Math.ceil((until - Date.now()) / 1000);
      resend.disabled = send.disabled = left > 0;
      resend.textContent = left > 0 ? this.#text.resendIn.replace('{n}', left) : this.#text.resend;
      if (left <= 0) clearInterval(this.#timer);
    };
    tick();
    this.#timer = setInterval(tick, 1000);
  }

  #typed() {
    const input = this.#parts['code-input'];
    const code = normaliseCode(input.value);
    if (code !== input.value) input.value = code;
    this.#config.then(({ codeLength }) => code.length === codeLength && this.#verify());
  }

  async #verify() {
    const p = this.#parts;
    const code = normaliseCode(p['code-input'].value);
    if (!this.#session || p.verify.disabled || code === '') return;
    p.verify.disabled = true;
    const { sessionId, email } = this.#session;
    const { error } = await this.#call('POST', 'verify', { sessionId, email, code });
    p.verify.disabled = false;
    if (error) {
      p['code-input'].focus();
      if (error.code === 'SESSION_NOT_FOUND') return this.#fail(error, 'expired');
      if (error.status === 429 || /locked/.test(error.message ?? '')) return this.#fail(error, 'locked');
      return this.#fail(error, error.code === 'INVALID_CODE' ? 'wrongCode' : 'error');
    }
    this.#step('verified');
    this.#say('verified');
    this.#internals.setFormValue(sessionId);
    this.#internals.setValidity({});
    this.#emit('verified', { sessionId, email });
  }
}

if (!customElements.get('postcode-otp')) customElements.define('postcode-otp', PostcodeOtp);
