// What an account's object does with its tables: every exported function of these modules whose first parameter
// is the database. The object runs them (src/durable-objects/account-store.ts); callers name them through
// `accountStore()` (client.ts) and never see a statement.

import * as bodies from './bodies';
import * as delivery from './delivery';
import * as deliveryEvents from './delivery-events';
import * as emailEvents from './email-events';
import * as emailStore from './email-store';
import * as emails from './emails';
import * as idempotency from './idempotency';
import * as inboundMessages from './inbound-messages';
import * as inboundRoutes from './inbound-routes';
import * as metrics from './metrics';
import type { AccountSql } from './object-sql';
import * as otpBranding from './otp-branding';
import * as otpHistory from './otp-history';
import * as otpOutcomes from './otp-outcomes';
import * as outbox from './outbox';
import * as retention from './retention';
import * as schedule from './schedule';
import * as sendLog from './send-log';
import * as suppressions from './suppressions';
import * as templates from './templates';
import * as webhookDeliveries from './webhook-deliveries';
import * as webhooks from './webhooks';

const modules = {
  ...bodies,
  ...deliveryEvents,
  ...delivery,
  ...emailEvents,
  ...emailStore,
  ...emails,
  ...idempotency,
  ...inboundMessages,
  ...inboundRoutes,
  ...metrics,
  ...otpBranding,
  ...otpHistory,
  ...otpOutcomes,
  ...outbox,
  ...retention,
  ...schedule,
  ...sendLog,
  ...suppressions,
  ...templates,
  ...webhookDeliveries,
  ...webhooks,
};

type Modules = typeof modules;
// biome-ignore lint/suspicious/noExplicitAny: any parameter list; the mapped type below keeps each one's own.
type Operation = (db: AccountSql, ...args: any[]) => Promise<unknown>;

/** The names of the operations: async functions of the database. */
export type OperationName = { [K in keyof Modules]: Modules[K] extends Operation ? K : never }[keyof Modules];

/** The operations as a caller sees them: the database left out. */
export type AccountOperations = {
  [K in OperationName]: Modules[K] extends (db: AccountSql, ...args: infer A) => Promise<infer R>
    ? (...args: A) => Promise<R>
    : never;
};

/** The operation of that name, or null when there is none. */
export function operationOf(name: string): Operation | null {
  const value = (modules as Record<string, unknown>)[name];
  return typeof value === 'function' ? (value as Operation) : null;
}
