// `postcode/browser`: only the public-token calls of instant OTP, so a page's bundle cannot carry a server key's
// methods (nor, by accident, the key). `<postcode-otp>` (served at /sdk/v1/otp.js) is the ready-made form of these.
import { type ClientOptions, type RequestOptions, Transport } from './http.js';
import type { BodyOf, DataOf } from './types.js';

export type { ClientOptions, PostcodeError, Result } from './http.js';
export type { ErrorCode } from './types.js';

export type OtpClientOptions = Omit<ClientOptions, 'maxRetryAfterSeconds'> & { token: string };

/** Instant OTP from a page, with a public token (`pc_otp_…`). */
export function createOtpClient(options: OtpClientOptions) {
  if (!options.token?.startsWith('pc_otp_')) {
    throw new TypeError('postcode/browser takes a public OTP token (pc_otp_…), never a server key');
  }
  // A browser waits for no 429: its Retry-After is shown to the person instead (a resend countdown).
  const t = new Transport(options.token, { ...options, maxRetryAfterSeconds: 0 });
  const post = <T>(path: string, body: unknown, o?: RequestOptions) => t.request<T>('POST', path, { body, ...o });
  return {
    config: () => t.request<DataOf<'getApiV1InstantOtpConfig'>>('GET', '/api/v1/instant-otp/config'),
    send: (request: BodyOf<'postApiV1InstantOtpSend'>, o?: RequestOptions) =>
      post<DataOf<'postApiV1InstantOtpSend'>>('/api/v1/instant-otp/send', request, o),
    resend: (request: BodyOf<'postApiV1InstantOtpResend'>, o?: RequestOptions) =>
      post<DataOf<'postApiV1InstantOtpResend'>>('/api/v1/instant-otp/resend', request, o),
    verify: (request: BodyOf<'postApiV1InstantOtpVerify'>, o?: RequestOptions) =>
      post<DataOf<'postApiV1InstantOtpVerify'>>('/api/v1/instant-otp/verify', request, o),
  };
}
