// Refused OTP sends, counted by reason for the metrics API and the dashboard (src/metrics.ts): after the answer, so
// a refusal costs the caller no time. The per-credential limit, checked before any of these, bounds how many one
// token or key can cause.
import { waitUntil } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { accountStore } from '../store/account/client';
import type { OtpRefusalReason } from '../store/account/otp-outcomes';
import type { OtpChannel } from './session';

/** Counts one refusal in the account's object, once the response is on its way. */
export function countRefusal(env: Bindings, accountId: string, channel: OtpChannel, reason: OtpRefusalReason): void {
  const at = Date.now();
  waitUntil(
    accountStore(env, accountId)
      .countOtpRefusal(accountId, channel, reason, at)
      .catch((error: unknown) => console.error('OTP refusal not counted', accountId, reason, String(error))),
  );
}
