// A recipient object's tables: made by its first statement, never checked on a call that needs none.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../src/ids';
import { newAccount, uniqueAddress } from '../support/api';

const tablesOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .toArray()
      .map((r) => r.name)
      .filter((name) => !name.startsWith('_cf') && !name.startsWith('sqlite')),
  );

describe('a new recipient object', () => {
  it('makes its tables on its first statement, also when that call only reads', async () => {
    const { accountId } = await newAccount();
    const id = env.OTP_RECIPIENT.idFromName(`${accountId}:${uniqueAddress('new-object')}`);
    const stub = env.OTP_RECIPIENT.get(id);
    // Waking the object runs no statement (a verify wakes the object its send made: no schema check).
    expect(await tablesOf(stub)).toEqual([]);
    expect(await stub.status(newSessionId(id.toString()), accountId, 'backend')).toBeNull();
    expect(await tablesOf(stub)).toEqual(['log_hits', 'otp_sessions']);
  });
});
