// A caller's way to an account's data: the account's object, named by the account id and made where its
// placement says (src/store/placement.ts), and its operations called by name. The object runs each one on its own database; nothing outside it prepares a statement there.
import type { Bindings } from '../../env';
import { accountStub } from '../placement';
import type { AccountOperations } from './operations';

/** An operation's answer: its value, or the message of what it threw. */
export type OperationResult = { ok: true; value: unknown } | { ok: false; message: string };

/** What the object answers to (src/durable-objects/account-store.ts). */
export interface AccountStoreRpc {
  run(accountId: string, operation: string, args: unknown[]): Promise<OperationResult>;
  /** Does the alarm's work now. */
  wake(): Promise<void>;
}

type StoreBindings = Pick<Bindings, 'DB' | 'ACCOUNT_STORE'>;

const rpcOf = async (env: StoreBindings, accountId: string) =>
  (await accountStub(env, accountId)) as unknown as AccountStoreRpc;

/** The account's object itself (for what is not an operation on its tables), made where its placement says. */
export function accountObject(env: StoreBindings, accountId: string): AccountStoreRpc {
  return {
    run: async (...args) => (await rpcOf(env, accountId)).run(...args),
    wake: async () => (await rpcOf(env, accountId)).wake(),
  };
}

export type AccountStore = AccountOperations;

/** The operations of the account's object. */
export function accountStore(env: StoreBindings, accountId: string): AccountStore {
  const stub = accountObject(env, accountId);
  return new Proxy({} as AccountStore, {
    get: (_target, name) => {
      if (typeof name !== 'string' || name === 'then') return undefined;
      return async (...args: unknown[]) => {
        const result = await stub.run(accountId, name, args);
        if (!result.ok) throw new Error(`${name}: ${result.message}`);
        return result.value;
      };
    },
  });
}
