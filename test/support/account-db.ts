// An account's own database as tests see it: statements run inside the account's object (runInDurableObject),
// with the same prepare/bind/first/all/run shape as D1. src never does this; it calls the object's operations.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { accountTagOfEmailId } from '../../src/ids';
import { ObjectSql } from '../../src/store/account/object-sql';
import { accountStub } from '../../src/store/placement';
import type { Row, SqlResult } from '../../src/store/sql';

/** The account's object where its placement says (its jurisdiction's namespace, if any). */
const stubOf = (accountId: string) => accountStub(env, accountId);

type Statement = {
  bind(...values: unknown[]): Statement;
  first<T = Row>(column?: string): Promise<T | null>;
  all<T = Row>(): Promise<SqlResult<T>>;
  run<T = Row>(): Promise<SqlResult<T>>;
  /** For `batch`: the statement's text and values. */
  readonly parts: { sql: string; values: unknown[] };
};

function statement(accountId: string, sql: string, values: unknown[] = []): Statement {
  const inObject = <R>(use: (db: ObjectSql) => Promise<R>) =>
    stubOf(accountId).then((stub) => runInDurableObject(stub, (_instance, state) => use(new ObjectSql(state.storage))));
  return {
    bind: (...next) => statement(accountId, sql, next),
    first: (column) =>
      inObject((db) =>
        db
          .prepare(sql)
          .bind(...values)
          .first(column),
      ),
    all: () =>
      inObject((db) =>
        db
          .prepare(sql)
          .bind(...values)
          .all(),
      ),
    run: () =>
      inObject((db) =>
        db
          .prepare(sql)
          .bind(...values)
          .run(),
      ),
    parts: { sql, values },
  };
}

/** The account's database (its object is made if it does not exist yet). */
export function accountDb(accountId: string) {
  return {
    prepare: (sql: string) => statement(accountId, sql),
    batch: async (statements: Statement[]) =>
      runInDurableObject(await stubOf(accountId), (_instance, state) => {
        const db = new ObjectSql(state.storage);
        return db.batch(statements.map(({ parts }) => db.prepare(parts.sql).bind(...parts.values)));
      }),
  };
}

/** The account whose tag the email id carries. */
export async function accountIdOfEmail(emailId: string): Promise<string> {
  const tag = accountTagOfEmailId(emailId);
  const id = tag && (await env.DB.prepare('SELECT id FROM accounts WHERE tag = ?').bind(tag).first<string>('id'));
  if (!id) throw new Error(`no account for email id ${emailId}`);
  return id;
}

/** The database of the account that owns this email. */
export const emailDb = async (emailId: string) => accountDb(await accountIdOfEmail(emailId));

/** Runs the account's alarm now if one is set (what the object would do at its time); whether it ran. */
export const runAccountAlarm = async (accountId: string) => runDurableObjectAlarm(await stubOf(accountId));
