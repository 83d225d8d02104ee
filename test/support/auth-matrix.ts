// The 401/403 cases every authenticated route must get right, generated from one description.
import { beforeAll, describe, it } from 'vitest';
import { call, expectError, newAccount, type TestAccount } from './api';

export type RouteUnderTest = { method: string; path: string; body?: unknown };

type Accepts = 'mail_api' | 'server_otp' | 'public_or_server';

const credentials: { name: string; pick: (a: TestAccount) => string; kind: 'mail' | 'server' | 'public' }[] = [
  { name: 'a mail_api key', pick: (a) => a.mailKey, kind: 'mail' },
  { name: 'a server_otp key', pick: (a) => a.serverKey, kind: 'server' },
  { name: 'a public OTP token', pick: (a) => a.publicToken, kind: 'public' },
];

const acceptedKinds: Record<Accepts, string[]> = {
  mail_api: ['mail'],
  server_otp: ['server'],
  public_or_server: ['server', 'public'],
};

export function describeAuthMatrix(route: RouteUnderTest, accepts: Accepts) {
  describe(`${route.method} ${route.path}: authentication`, () => {
    let account: TestAccount;
    beforeAll(async () => {
      account = await newAccount('auth matrix');
    });
    const send = (headers: Record<string, string>) => call(route.method, route.path, { body: route.body, headers });

    it('401 without Authorization', async () => expectError(await send({}), 401, 'UNAUTHORIZED'));
    it('401 with an unknown key', async () =>
      expectError(await send({ Authorization: 'Bearer pc_key_doesnotexistdoesnotexist' }), 401, 'UNAUTHORIZED'));
    it('401 with a revoked key', async () =>
      expectError(await send({ Authorization: `Bearer ${account.revokedKey}` }), 401, 'UNAUTHORIZED'));
    it('401 with a malformed header', async () =>
      expectError(await send({ Authorization: `Token ${account.mailKey}` }), 401, 'UNAUTHORIZED'));
    for (const credential of credentials) {
      if (acceptedKinds[accepts].includes(credential.kind)) continue;
      it(`403 SCOPE_REQUIRED with ${credential.name}`, async () =>
        expectError(await send({ Authorization: `Bearer ${credential.pick(account)}` }), 403, 'SCOPE_REQUIRED'));
    }
  });
}
