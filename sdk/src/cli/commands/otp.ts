// `postcode otp send|verify`: a one-time code by email and its check, with a server key (scope server_otp), as a
// backend does it (/api/v1/backend-otp).
import type { BodyOf } from '../../index.js';
import { type Command, dataOf } from '../command.js';
import { fields } from '../output.js';

const send: Command = {
  path: ['otp', 'send'],
  summary: 'Mails a one-time code (a server key); answers the session to verify it with',
  flags: [
    { name: 'email', type: 'string', value: 'ADDRESS', summary: 'Where the code goes', required: true },
    { name: 'subject', type: 'string', value: 'TEXT', summary: "The mail's subject" },
    { name: 'verification-line', type: 'string', value: 'TEXT', summary: 'One line shown above the code' },
    { name: 'expires-in', type: 'string', value: 'SECONDS', summary: 'How long the code holds (60-3600)' },
    { name: 'digits', type: 'string', value: 'N', summary: 'Digits of the code (4-10)' },
    { name: 'locale', type: 'string', value: 'LANG', summary: "The mail's language, e.g. de, pt-BR" },
    {
      name: 'template-id',
      type: 'string',
      value: 'ID',
      summary: 'A saved template with {{code}} (not with --subject)',
    },
  ],
  details: `  postcode otp send --email ada@example.com
  postcode otp verify --session otp_... --email ada@example.com --code 123456`,
  async run(ctx) {
    const { flags } = ctx;
    const expires = flags.integer('expires-in');
    const digits = flags.integer('digits');
    const body: BodyOf<'postApiV1BackendOtpSend'> = {
      email: flags.string('email')!,
      ...(flags.has('subject') ? { subject: flags.string('subject') } : {}),
      ...(flags.has('verification-line') ? { verificationLine: flags.string('verification-line') } : {}),
      ...(expires !== undefined ? { expiresInSeconds: expires } : {}),
      ...(digits !== undefined ? { otpDigits: digits } : {}),
      ...(flags.has('locale') ? { locale: flags.string('locale') } : {}),
      ...(flags.has('template-id') ? { templateId: flags.string('template-id') } : {}),
    };
    const data = dataOf(await ctx.client().otp.backend.send(body));
    return {
      data,
      human: () =>
        `${data.sent ? 'Code sent' : 'Code not sent'} to ${data.email}.\n${fields([
          ['session', data.sessionId],
          ['expires', data.expiresAt],
        ])}`,
    };
  },
};

const verify: Command = {
  path: ['otp', 'verify'],
  summary: 'Checks a code against its session (a wrong or expired one is the error, exit 1)',
  flags: [
    { name: 'session', type: 'string', value: 'ID', summary: 'The sessionId `otp send` answered', required: true },
    { name: 'email', type: 'string', value: 'ADDRESS', summary: 'The address the code went to', required: true },
    { name: 'code', type: 'string', value: 'DIGITS', summary: 'The code from the mail', required: true },
  ],
  async run(ctx) {
    const data = dataOf(
      await ctx.client().otp.backend.verify({
        sessionId: ctx.flags.string('session')!,
        email: ctx.flags.string('email')!,
        code: ctx.flags.string('code')!,
      }),
    );
    return { data, human: () => (data.verified ? 'Verified.\n' : 'Not verified.\n') };
  },
};

export const otpCommands: Command[] = [send, verify];
