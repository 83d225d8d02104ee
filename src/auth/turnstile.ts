// The bot check a public OTP token may require on its sends: the browser's Turnstile answer validated with
// Siteverify before anything is mailed. Missing, refused or unverifiable → 403 CHALLENGE_FAILED.
import { config, otpPepper } from '../config';
import type { Bindings } from '../env';
import { ApiError } from '../errors';
import { OpenedOnce, type SealPurpose, seal, unseal } from '../sealed';
import type { TurnstileSetting } from '../store/control/otp-tokens';
import type { Credential } from './credential';

const PURPOSE: SealPurpose = { info: 'postcode turnstile secret', name: 'Turnstile secret' };
/** Opened Turnstile secrets: a challenged send opens its token's secret once per isolate, not on every send. */
const secrets = new OpenedOnce<string>(1_000);
/** How long one Siteverify call may take; a call that does not answer in time is tried once more. */
const SITEVERIFY_TIMEOUT_MS = 3_000;

/** A token's setting as stored: the secret sealed under a key derived from OTP_PEPPER. */
export async function sealTurnstile(
  env: Bindings,
  setting: { siteKey: string; secret: string },
): Promise<TurnstileSetting> {
  const sealedSecret = await seal(new TextEncoder().encode(setting.secret), otpPepper(env), PURPOSE);
  return { siteKey: setting.siteKey, sealedSecret };
}

type SiteverifyAnswer = { success: boolean; 'error-codes'?: string[] };

/** One Siteverify call; null when no answer came (network, timeout, a 5xx, not its JSON). */
async function siteverify(url: string, request: Record<string, string>): Promise<SiteverifyAnswer | null> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(SITEVERIFY_TIMEOUT_MS),
    });
    if (!res.ok) return null;
    const answer = (await res.json()) as Partial<SiteverifyAnswer>;
    return typeof answer.success === 'boolean' ? (answer as SiteverifyAnswer) : null;
  } catch {
    return null;
  }
}

/**
 * Whether Siteverify accepts the answer: asked once more with the same idempotency key when no answer came, so a
 * retry of an answer it did see is not refused as spent. Null: accepted; otherwise why not.
 */
export async function turnstileRefusal(
  url: string,
  check: { secret: string; response: string; remoteip: string | undefined },
): Promise<string | null> {
  const request: Record<string, string> = {
    secret: check.secret,
    response: check.response,
    idempotency_key: crypto.randomUUID(),
    ...(check.remoteip ? { remoteip: check.remoteip } : {}),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await siteverify(url, request);
    if (answer?.success) return null;
    if (answer) return answer['error-codes']?.join(', ') || 'refused';
  }
  return 'Siteverify did not answer';
}

/**
 * A send with a public token that requires Turnstile: its `turnstileToken` must pass Siteverify. A server key and
 * a token without the setting never need one.
 */
export async function requireChallenge(
  env: Bindings,
  credential: Credential,
  turnstileToken: string | undefined,
  ip: string | undefined,
): Promise<void> {
  if (credential.kind !== 'public_token' || credential.turnstile === null) return;
  if (!turnstileToken) {
    throw new ApiError('CHALLENGE_FAILED', 'turnstileToken: this token requires a Turnstile check, and none was sent');
  }
  const { sealedSecret } = credential.turnstile;
  const pepper = otpPepper(env);
  const secret = await secrets.get(`${pepper}\u0000${sealedSecret}`, async () =>
    new TextDecoder().decode(await unseal(sealedSecret, pepper, PURPOSE)),
  );
  const refusal = await turnstileRefusal(config(env).otp.turnstileVerifyUrl, {
    secret,
    response: turnstileToken,
    remoteip: ip,
  });
  if (refusal !== null) {
    throw new ApiError('CHALLENGE_FAILED', `turnstileToken: the bot check failed (${refusal}); nothing was sent`);
  }
}
