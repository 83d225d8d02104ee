// The hosted verify page's words in every language of OTP mail. Counts are worded with Intl.PluralRules.
import { type Language, languageOf, perLanguage } from './languages';

export type PageText = {
  title: string;
  email: string;
  code: string;
  verify: string;
  verifyLink: string;
  codeInstead: string;
  enterCode: string;
  pressButton: string;
  verified: string;
  /** By plural category of the attempts left (`{n}` is the number). */
  wrong: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
  noAttempts: string;
  invalid: string;
  /** A form posted without the email address or the code. */
  incomplete: string;
  locked: string;
  expired: string;
  error: string;
};

const TEXT: Record<Language, PageText> = {
  en: {
    title: 'Verify your email address',
    email: 'Email address',
    code: 'Verification code',
    verify: 'Verify',
    verifyLink: 'Verify my email address',
    codeInstead: 'Enter the code instead',
    enterCode: 'Enter the code we emailed you.',
    pressButton: 'Press the button to verify your email address.',
    verified: 'Your email address is verified. You can close this page.',
    wrong: { one: 'That code is not right. {n} attempt left.', other: 'That code is not right. {n} attempts left.' },
    noAttempts: 'That code is not right, and there are no attempts left. Request a new code.',
    invalid: 'Enter the code as digits only.',
    incomplete: 'Enter your email address and the code.',
    locked: 'Too many wrong codes. This code is locked; request a new one.',
    expired: 'This code has expired or is no longer valid. Request a new one.',
    error: 'Something went wrong on our side. Please open the link from the email again in a moment.',
  },
  de: {
    title: 'E-Mail-Adresse bestätigen',
    email: 'E-Mail-Adresse',
    code: 'Bestätigungscode',
    verify: 'Bestätigen',
    verifyLink: 'Meine E-Mail-Adresse bestätigen',
    codeInstead: 'Stattdessen den Code eingeben',
    enterCode: 'Geben Sie den Code ein, den wir Ihnen gesendet haben.',
    pressButton: 'Klicken Sie auf die Schaltfläche, um Ihre E-Mail-Adresse zu bestätigen.',
    verified: 'Ihre E-Mail-Adresse ist bestätigt. Sie können diese Seite schließen.',
    wrong: {
      one: 'Der Code ist nicht richtig. Noch {n} Versuch.',
      other: 'Der Code ist nicht richtig. Noch {n} Versuche.',
    },
    noAttempts: 'Der Code ist nicht richtig, und es sind keine Versuche mehr übrig. Fordern Sie einen neuen Code an.',
    invalid: 'Geben Sie den Code nur als Ziffern ein.',
    incomplete: 'Geben Sie Ihre E-Mail-Adresse und den Code ein.',
    locked: 'Zu viele falsche Codes. Dieser Code ist gesperrt; fordern Sie einen neuen an.',
    expired: 'Dieser Code ist abgelaufen oder nicht mehr gültig. Fordern Sie einen neuen an.',
    error: 'Bei uns ist etwas schiefgelaufen. Öffnen Sie den Link aus der E-Mail gleich noch einmal.',
  },
  fr: {
    title: 'Vérifiez votre adresse e-mail',
    email: 'Adresse e-mail',
    code: 'Code de vérification',
    verify: 'Vérifier',
    verifyLink: 'Vérifier mon adresse e-mail',
    codeInstead: 'Saisir le code à la place',
    enterCode: 'Saisissez le code que nous vous avons envoyé.',
    pressButton: 'Appuyez sur le bouton pour vérifier votre adresse e-mail.',
    verified: 'Votre adresse e-mail est vérifiée. Vous pouvez fermer cette page.',
    wrong: {
      one: "Ce code n'est pas correct. Il reste {n} tentative.",
      other: "Ce code n'est pas correct. Il reste {n} tentatives.",
    },
    noAttempts: "Ce code n'est pas correct et il ne reste aucune tentative. Demandez un nouveau code.",
    invalid: 'Saisissez le code en chiffres uniquement.',
    incomplete: 'Saisissez votre adresse e-mail et le code.',
    locked: 'Trop de codes erronés. Ce code est bloqué ; demandez-en un nouveau.',
    expired: "Ce code a expiré ou n'est plus valide. Demandez-en un nouveau.",
    error: "Un problème est survenu de notre côté. Rouvrez le lien de l'e-mail dans un instant.",
  },
  es: {
    title: 'Verifica tu correo electrónico',
    email: 'Correo electrónico',
    code: 'Código de verificación',
    verify: 'Verificar',
    verifyLink: 'Verificar mi correo electrónico',
    codeInstead: 'Introducir el código',
    enterCode: 'Introduce el código que te hemos enviado.',
    pressButton: 'Pulsa el botón para verificar tu correo electrónico.',
    verified: 'Tu correo electrónico está verificado. Puedes cerrar esta página.',
    wrong: {
      one: 'El código no es correcto. Queda {n} intento.',
      other: 'El código no es correcto. Quedan {n} intentos.',
    },
    noAttempts: 'El código no es correcto y no quedan intentos. Solicita un código nuevo.',
    invalid: 'Introduce el código solo con dígitos.',
    incomplete: 'Introduce tu correo electrónico y el código.',
    locked: 'Demasiados códigos incorrectos. Este código está bloqueado; solicita uno nuevo.',
    expired: 'Este código ha caducado o ya no es válido. Solicita uno nuevo.',
    error: 'Algo ha fallado por nuestra parte. Vuelve a abrir el enlace del correo en un momento.',
  },
  pt: {
    title: 'Verifique o seu endereço de e-mail',
    email: 'Endereço de e-mail',
    code: 'Código de verificação',
    verify: 'Verificar',
    verifyLink: 'Verificar o meu endereço de e-mail',
    codeInstead: 'Introduzir o código',
    enterCode: 'Introduza o código que lhe enviámos.',
    pressButton: 'Prima o botão para verificar o seu endereço de e-mail.',
    verified: 'O seu endereço de e-mail está verificado. Pode fechar esta página.',
    wrong: {
      one: 'O código não está correto. Resta {n} tentativa.',
      other: 'O código não está correto. Restam {n} tentativas.',
    },
    noAttempts: 'O código não está correto e não restam tentativas. Peça um código novo.',
    invalid: 'Introduza o código apenas com dígitos.',
    incomplete: 'Introduza o seu endereço de e-mail e o código.',
    locked: 'Demasiados códigos errados. Este código está bloqueado; peça um novo.',
    expired: 'Este código expirou ou já não é válido. Peça um novo.',
    error: 'Algo correu mal do nosso lado. Abra novamente a ligação do e-mail dentro de momentos.',
  },
  it: {
    title: 'Verifica il tuo indirizzo email',
    email: 'Indirizzo email',
    code: 'Codice di verifica',
    verify: 'Verifica',
    verifyLink: 'Verifica il mio indirizzo email',
    codeInstead: 'Inserisci invece il codice',
    enterCode: 'Inserisci il codice che ti abbiamo inviato.',
    pressButton: 'Premi il pulsante per verificare il tuo indirizzo email.',
    verified: 'Il tuo indirizzo email è verificato. Puoi chiudere questa pagina.',
    wrong: {
      one: 'Il codice non è corretto. Resta {n} tentativo.',
      other: 'Il codice non è corretto. Restano {n} tentativi.',
    },
    noAttempts: 'Il codice non è corretto e non restano tentativi. Richiedi un nuovo codice.',
    invalid: 'Inserisci il codice usando solo cifre.',
    incomplete: 'Inserisci il tuo indirizzo email e il codice.',
    locked: 'Troppi codici errati. Questo codice è bloccato; richiedine uno nuovo.',
    expired: 'Questo codice è scaduto o non è più valido. Richiedine uno nuovo.',
    error: "Qualcosa è andato storto da parte nostra. Riapri tra poco il link dell'email.",
  },
  nl: {
    title: 'Bevestig je e-mailadres',
    email: 'E-mailadres',
    code: 'Verificatiecode',
    verify: 'Bevestigen',
    verifyLink: 'Mijn e-mailadres verifiëren',
    codeInstead: 'In plaats daarvan de code invoeren',
    enterCode: 'Voer de code in die we je hebben gemaild.',
    pressButton: 'Druk op de knop om je e-mailadres te bevestigen.',
    verified: 'Je e-mailadres is bevestigd. Je kunt deze pagina sluiten.',
    wrong: {
      one: 'Die code klopt niet. Nog {n} poging over.',
      other: 'Die code klopt niet. Nog {n} pogingen over.',
    },
    noAttempts: 'Die code klopt niet en er zijn geen pogingen meer over. Vraag een nieuwe code aan.',
    invalid: 'Voer de code alleen met cijfers in.',
    incomplete: 'Voer je e-mailadres en de code in.',
    locked: 'Te veel verkeerde codes. Deze code is geblokkeerd; vraag een nieuwe aan.',
    expired: 'Deze code is verlopen of niet meer geldig. Vraag een nieuwe aan.',
    error: 'Er ging bij ons iets mis. Open de link uit de e-mail zo meteen opnieuw.',
  },
  ja: {
    title: 'メールアドレスの確認',
    email: 'メールアドレス',
    code: '確認コード',
    verify: '確認',
    verifyLink: 'メールアドレスを確認する',
    codeInstead: '代わりにコードを入力する',
    enterCode: 'メールでお送りしたコードを入力してください。',
    pressButton: 'ボタンを押してメールアドレスを確認してください。',
    verified: 'メールアドレスが確認されました。このページは閉じて構いません。',
    wrong: { other: 'コードが正しくありません。残り{n}回です。' },
    noAttempts: 'コードが正しくなく、残りの試行回数がありません。新しいコードをリクエストしてください。',
    invalid: 'コードは数字のみで入力してください。',
    incomplete: 'メールアドレスとコードを入力してください。',
    locked: '誤ったコードが多すぎます。このコードはロックされました。新しいコードをリクエストしてください。',
    expired: 'このコードは期限切れか、無効になっています。新しいコードをリクエストしてください。',
    error: '問題が発生しました。しばらくしてからメールのリンクをもう一度開いてください。',
  },
  zh: {
    title: '验证您的邮箱地址',
    email: '邮箱地址',
    code: '验证码',
    verify: '验证',
    verifyLink: '验证我的邮箱地址',
    codeInstead: '改为输入验证码',
    enterCode: '请输入我们通过邮件发送给您的验证码。',
    pressButton: '请点击按钮验证您的邮箱地址。',
    verified: '您的邮箱地址已验证。您可以关闭此页面。',
    wrong: { other: '验证码不正确。还剩 {n} 次尝试机会。' },
    noAttempts: '验证码不正确，且已没有尝试机会。请重新获取验证码。',
    invalid: '请仅输入数字验证码。',
    incomplete: '请输入您的邮箱地址和验证码。',
    locked: '错误次数过多。此验证码已被锁定，请重新获取。',
    expired: '此验证码已过期或不再有效。请重新获取。',
    error: '我们这边出了点问题。请稍后重新打开邮件中的链接。',
  },
};

export function pageText(language: Language): PageText {
  return TEXT[language];
}

const pluralRules = perLanguage((language) => new Intl.PluralRules(language));
const numberFormat = perLanguage((language) => new Intl.NumberFormat(language));

/** "That code is not right. 4 attempts left." in `language`, the plural form chosen by Intl.PluralRules. */
export function wrongCodeText(language: Language, attemptsLeft: number): string {
  const forms = TEXT[language].wrong;
  const form = forms[pluralRules(language).select(attemptsLeft)] ?? forms.other;
  return form.replace('{n}', numberFormat(language).format(attemptsLeft));
}

/**
 * The page's language: the session's (the `locale` of its send) if it has one, else the first language of
 * `Accept-Language` (by q-value) that we have, else English.
 */
export function pageLanguage(sessionLanguage: Language | undefined, acceptLanguage: string | undefined): Language {
  if (sessionLanguage) return sessionLanguage;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      );
      return { tag: tag.trim(), q: Number.isNaN(q) ? 0 : q, index };
    })
    .filter((entry) => entry.tag && entry.tag !== '*' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    const language = languageOf(tag);
    if (language !== 'en' || tag.toLowerCase().startsWith('en')) return language;
  }
  return 'en';
}
