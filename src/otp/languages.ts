// The languages of OTP mail: a BCP 47 tag is matched to one we have by its language; anything else is English.
// Durations and their plurals come from Intl, not from hand-made rules.

export const LANGUAGES = ['en', 'de', 'fr', 'es', 'pt', 'it', 'nl', 'ja', 'zh'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Whether `tag` is a well-formed BCP 47 language tag. */
export function isLanguageTag(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** The language of a well-formed tag that we have (`pt-BR` → pt, `zh-Hant-TW` → zh), else English. */
export function languageOf(tag: string | undefined): Language {
  if (!tag || !isLanguageTag(tag)) return 'en';
  const language = new Intl.Locale(tag).language;
  return (LANGUAGES as readonly string[]).includes(language) ? (language as Language) : 'en';
}

type MailText = {
  subject: string;
  line: string;
  /** The sentence around the lifetime, `{duration}` being "10 minutes" in the language. */
  expiry: string;
  ignore: string;
  link: string;
  button: string;
  /** The support line of branded mail and pages, `{email}` being the account's support address. */
  help: string;
};

const MAIL: Record<Language, MailText> = {
  en: {
    subject: 'Your verification code',
    line: 'Use this code to continue:',
    expiry: 'This code expires in {duration}.',
    ignore: 'If you did not ask for it, you can ignore this email.',
    link: 'Or verify with one click:',
    button: 'Verify my email address',
    help: 'Questions? Write to {email}.',
  },
  de: {
    subject: 'Ihr Bestätigungscode',
    line: 'Verwenden Sie diesen Code, um fortzufahren:',
    expiry: 'Dieser Code läuft in {duration} ab.',
    ignore: 'Wenn Sie ihn nicht angefordert haben, können Sie diese E-Mail ignorieren.',
    link: 'Oder mit einem Klick bestätigen:',
    button: 'Meine E-Mail-Adresse bestätigen',
    help: 'Fragen? Schreiben Sie an {email}.',
  },
  fr: {
    subject: 'Votre code de vérification',
    line: 'Utilisez ce code pour continuer :',
    expiry: 'Ce code expire dans {duration}.',
    ignore: "Si vous ne l'avez pas demandé, vous pouvez ignorer cet e-mail.",
    link: 'Ou vérifiez en un clic :',
    button: 'Vérifier mon adresse e-mail',
    help: 'Des questions ? Écrivez à {email}.',
  },
  es: {
    subject: 'Tu código de verificación',
    line: 'Usa este código para continuar:',
    expiry: 'Este código caduca en {duration}.',
    ignore: 'Si no lo has solicitado, puedes ignorar este correo.',
    link: 'O verifica con un clic:',
    button: 'Verificar mi correo electrónico',
    help: '¿Preguntas? Escribe a {email}.',
  },
  pt: {
    subject: 'O seu código de verificação',
    line: 'Use este código para continuar:',
    expiry: 'Este código expira em {duration}.',
    ignore: 'Se não o pediu, pode ignorar este e-mail.',
    link: 'Ou verifique com um clique:',
    button: 'Verificar o meu endereço de e-mail',
    help: 'Dúvidas? Escreva para {email}.',
  },
  it: {
    subject: 'Il tuo codice di verifica',
    line: 'Usa questo codice per continuare:',
    expiry: 'Questo codice scade tra {duration}.',
    ignore: "Se non l'hai richiesto, puoi ignorare questa email.",
    link: 'Oppure verifica con un clic:',
    button: 'Verifica il mio indirizzo email',
    help: 'Domande? Scrivi a {email}.',
  },
  nl: {
    subject: 'Je verificatiecode',
    line: 'Gebruik deze code om verder te gaan:',
    expiry: 'Deze code verloopt over {duration}.',
    ignore: 'Heb je hier niet om gevraagd, dan kun je deze e-mail negeren.',
    link: 'Of verifieer met één klik:',
    button: 'Mijn e-mailadres verifiëren',
    help: 'Vragen? Mail naar {email}.',
  },
  ja: {
    subject: '確認コード',
    line: '続行するには次のコードを使用してください:',
    expiry: 'このコードの有効期限は{duration}です。',
    ignore: '心当たりがない場合は、このメールを無視してください。',
    link: 'またはワンクリックで確認:',
    button: 'メールアドレスを確認する',
    help: 'ご不明な点は {email} までお問い合わせください。',
  },
  zh: {
    subject: '您的验证码',
    line: '请使用此验证码继续：',
    expiry: '此验证码将在{duration}后失效。',
    ignore: '如果这不是您本人的操作，请忽略此邮件。',
    link: '或一键验证：',
    button: '验证我的邮箱地址',
    help: '如有疑问，请联系 {email}。',
  },
};

/** "Questions? Write to support@…" in `language`. */
export const helpLine = (language: Language, email: string) => MAIL[language].help.replace('{email}', email);

/** Made once per language and isolate: building an Intl formatter costs more than using it. */
export function perLanguage<T>(make: (language: Language) => T): (language: Language) => T {
  const made = new Map<Language, T>();
  return (language) => {
    let value = made.get(language);
    if (value === undefined) {
      value = make(language);
      made.set(language, value);
    }
    return value;
  };
}

const minutesFormat = perLanguage(
  (language) => new Intl.NumberFormat(language, { style: 'unit', unit: 'minute', unitDisplay: 'long' }),
);

/** The mail's words in `language`; the lifetime written out by Intl ("10 minutes", "10 Minuten", "10分钟"). */
export function mailText(language: Language, minutes: number) {
  const text = MAIL[language];
  const duration = minutesFormat(language).format(minutes);
  return { ...text, expiry: `${text.expiry.replace('{duration}', duration)} ${text.ignore}` };
}
