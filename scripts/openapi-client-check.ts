// Type-checked by `npm run check:openapi` next to a client generated from the served document
// (openapi-typescript -> postcode-api.d.ts), under module/moduleResolution NodeNext and strict. It is
// never run: it only has to compile, so the calls a client makes are accepted as written.
import createClient from 'openapi-fetch';
import type { paths } from './postcode-api.js';

const postcode = createClient<paths>({
  baseUrl: 'http://127.0.0.1:8787',
  headers: { Authorization: 'Bearer pc_example' },
});

export async function listCalls(): Promise<void> {
  // page/limit are integers in the document: a client passes numbers.
  await postcode.GET('/api/v1/emails', { params: { query: { page: 1, limit: 20 } } });
  await postcode.GET('/api/v1/templates', { params: { query: { page: 1, limit: 20 } } });
  await postcode.GET('/api/v1/instant-otp/verifications', { params: { query: { limit: 20 } } });
  // Both are optional (defaults 1 and 20 / 50).
  await postcode.GET('/api/v1/emails');
  await postcode.GET('/api/v1/instant-otp/verifications');
}

export async function sendCalls(): Promise<void> {
  const sent = await postcode.POST('/api/v1/emails', {
    body: { to: 'ada@example.com', subject: 'Hi', text: 'Hello' },
  });
  const emailId: string | undefined = sent.data?.data.id;

  const verified = await postcode.POST('/api/v1/backend-otp/verify', {
    body: { sessionId: 'otp_example', email: 'ada@example.com', code: '123456' },
  });
  const ok: boolean | undefined = verified.data?.data.verified;
  console.log(emailId, ok);
}
