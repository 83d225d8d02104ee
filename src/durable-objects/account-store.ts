import { DurableObject } from 'cloudflare:workers';
import { config } from '../config';
import type { Bindings } from '../env';
import { moveBodies } from '../mail/bodies';
import { dispatchScheduledMail, recoverOverdueMail, releaseHeldMail } from '../queue/producer';
import { deleteExpired, retentionDueAt } from '../retention';
import type { OperationResult } from '../store/account/client';
import { ObjectSql } from '../store/account/object-sql';
import { operationOf } from '../store/account/operations';
import { SCHEDULE_DISPATCH_SECONDS } from '../store/account/outbox';
import { migrateAccountSchema } from '../store/account/schema';
import { objectState, setObjectState, waitingWork } from '../store/account/work';
import { forgetHeldMail, noteHeldMail } from '../store/control/held-mail';
import { getSettings } from '../store/control/settings';
import { bucketsOf } from '../store/placement';
import { recoverOverdueDeliveries } from '../webhooks/deliver';

/** While mail is held (freeze mode), the object asks the control plane again this often. */
const HELD_RECHECK_MS = 60_000;

/**
 * One account's data plane: its own SQLite database (src/store/account/), and an alarm that does for this account
 * what a sweep over every account would otherwise do: scheduled mail dispatched as its time comes near, mail and
 * webhook deliveries whose queue message was lost queued again, held mail released after an unfreeze, and
 * retention. Callers reach it through `accountStore()` (src/store/account/client.ts).
 */
export class AccountStore extends DurableObject<Bindings> {
  private readonly db: ObjectSql;
  private accountId: string | null = null;
  /** The alarm as last set or read (undefined: not read yet). */
  private alarmAt: number | null | undefined;
  /** Scheduled mail due up to this time (epoch ms) has its queue message. */
  private dispatchedUntil: number | undefined;
  /** The control plane knows that this account holds mail (freeze mode). */
  private heldNoted = false;
  /** When the alarm's sweeps are due next (undefined: not known, so they run). */
  private sweepsAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    migrateAccountSchema(ctx.storage);
    this.db = new ObjectSql(ctx.storage);
  }

  /**
   * Runs one operation of src/store/account on this account's database, then plans the alarm. A failure is
   * answered, not thrown, so that the caller rethrows it as its own (see `accountStore`).
   */
  async run(accountId: string, operation: string, args: unknown[]): Promise<OperationResult> {
    try {
      const run = operationOf(operation);
      if (!run) throw new Error(`AccountStore: no operation ${operation}`);
      await this.knowAccount(accountId);
      // One transaction: an operation of several statements (an accept, a claim) is all or none.
      const value = await this.ctx.storage.transaction(() => run(this.db, ...args));
      // The operation stands whatever planning meets (the next operation or alarm plans again).
      await this.plan(false).catch((error: unknown) => console.error('AccountStore: alarm not planned', String(error)));
      return { ok: true, value };
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Does the alarm's work now, the whole of it (an unfreeze wakes the accounts that hold mail). */
  async wake(): Promise<void> {
    this.sweepsAt = undefined;
    await this.alarm();
  }

  async alarm(): Promise<void> {
    this.alarmAt = null;
    const accountId = this.accountId ?? (await objectState(this.db, 'account'));
    if (!accountId) return;
    this.accountId = accountId;
    const env = this.env;
    const buckets = await bucketsOf(env, accountId);
    await moveBodies(this.db, buckets.bodies);
    // Woken only for bodies: the rest is not due yet.
    if (this.sweepsAt !== undefined && Date.now() < this.sweepsAt) return this.plan(false);
    const settings = config(env);
    const grace = settings.outbox.graceSeconds;
    const now = Date.now();
    const dispatched = await this.dispatched();
    const work = await waitingWork(this.db, dispatched);
    if (work.held) {
      // The control plane's word, not a cached one: an unfreeze must not wait for a cache.
      if (!(await getSettings(env.DB)).frozen) {
        await releaseHeldMail(env, this.db, accountId);
        await forgetHeldMail(env.DB, accountId);
        this.heldNoted = false;
      }
    }
    const until = now + SCHEDULE_DISPATCH_SECONDS * 1000;
    await dispatchScheduledMail(env, this.db, accountId, dispatched, until, grace);
    await this.setDispatched(until);
    await recoverOverdueMail(env, this.db, accountId, grace);
    await recoverOverdueDeliveries(env, this.db, accountId, grace);
    await deleteExpired(env, this.db, new Date(now), buckets);
    await this.plan(true);
  }

  private async knowAccount(accountId: string): Promise<void> {
    if (this.accountId === accountId) return;
    const stored = await objectState(this.db, 'account');
    if (stored !== null && stored !== accountId) throw new Error(`AccountStore: ${accountId} is not this object's`);
    if (stored === null) await setObjectState(this.db, 'account', accountId);
    this.accountId = accountId;
  }

  private async dispatched(): Promise<number> {
    this.dispatchedUntil ??= Number((await objectState(this.db, 'dispatched_until')) ?? 0);
    return this.dispatchedUntil;
  }

  private async setDispatched(until: number): Promise<void> {
    this.dispatchedUntil = until;
    await setObjectState(this.db, 'dispatched_until', String(until));
  }

  /**
   * Sets the alarm to the earliest time something here needs it. After an operation only an earlier time
   * moves it (a few index lookups, and a storage write when it moves); after the alarm, retention is planned too.
   */
  private async plan(afterAlarm: boolean): Promise<void> {
    const now = Date.now();
    // An alarm already due can come no earlier, and it plans again when it has run: nothing to read here.
    if (!afterAlarm && this.alarmAt != null && this.alarmAt <= now) return;
    const grace = config(this.env).outbox.graceSeconds * 1000;
    const work = await waitingWork(this.db, await this.dispatched());
    const times: number[] = [];
    if (work.inFlight) times.push(now + grace);
    if (work.held) {
      times.push(now + HELD_RECHECK_MS);
      if (!this.heldNoted && this.accountId) {
        await noteHeldMail(this.env.DB, this.accountId);
        this.heldNoted = true;
      }
    }
    if (work.nextScheduled !== null) times.push(work.nextScheduled - SCHEDULE_DISPATCH_SECONDS * 1000);
    // A dispatched one still SCHEDULED once its time and the grace have passed lost its message.
    if (work.dispatchedScheduled !== null) times.push(work.dispatchedScheduled + grace);
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    if (afterAlarm || this.alarmAt === null) {
      const retention = await retentionDueAt(this.env, this.db);
      if (retention !== null) times.push(retention);
    }
    // The sweeps' next time: set by the alarm, moved earlier by an operation that brings work sooner.
    const sweepsAt = times.length > 0 ? Math.min(...times) : Number.POSITIVE_INFINITY;
    if (afterAlarm) this.sweepsAt = sweepsAt;
    else if (this.sweepsAt !== undefined) this.sweepsAt = Math.min(this.sweepsAt, sweepsAt);
    // Bodies just accepted go to R2 at once, after the answer.
    if (work.bodies) times.push(now);
    if (times.length === 0) return;
    const at = Math.max(Math.min(...times), now);
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at; // before the await, so a concurrent call sees it
    try {
      await this.ctx.storage.setAlarm(at);
    } catch (error) {
      this.alarmAt = undefined; // read again next time
      throw error;
    }
  }
}
