// The outcomes of a delivery batch written to the accounts' objects: each as soon as its route has answered,
// while the next mail is sent, and those that came in while a write was under way together in the next one.
import type { Bindings } from '../env';
import { deleteAttachments } from '../mail/attachments';
import type { AccountStore } from '../store/account/client';
import type { AttemptRecord } from '../store/account/delivery';
import type { EmailRecord } from '../store/account/emails';
import { noteProviderIds } from '../store/directory';
import { bucketsOf } from '../store/placement';
import { queueDeliveries } from '../webhooks/deliver';

/** An attempt's outcome to write, and what to do with its queue message once written. */
export type Outcome = {
  message: Message<unknown>;
  email: EmailRecord;
  record: AttemptRecord;
  /** Set: the email waits again, and its message comes back after this many seconds. */
  retryInSeconds: number | null;
  /** Ids the provider gave its recipients (Cloudflare Email Service), to index. */
  providerIds: string[];
};

/**
 * Writes outcomes in the background of a batch, one call to an account's object at a time. What arrives
 * while a call is under way waits and goes in the next call, all of it: one transaction for many mails
 * when the object is slower to answer than the routes, one per mail when it is not. A message is acked
 * (or put back for its retry) only once its outcome is written.
 */
export class OutcomeWriter {
  private readonly waiting = new Map<string, { store: AccountStore; outcomes: Outcome[] }>();
  private writing: Promise<void> | null = null;

  constructor(
    private readonly env: Bindings,
    /** How long a message whose outcome could not be written waits: its lease (it is not sent before). */
    private readonly unwrittenDelaySeconds: number,
  ) {}

  add(store: AccountStore, outcome: Outcome): void {
    const accountId = outcome.email.accountId;
    const group = this.waiting.get(accountId) ?? { store, outcomes: [] };
    group.outcomes.push(outcome);
    this.waiting.set(accountId, group);
    this.writing ??= this.writeWaiting();
  }

  /** Resolves once every outcome added so far is written (or given up on) and its message settled. */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeWaiting(): Promise<void> {
    while (this.waiting.size > 0) {
      const groups = [...this.waiting.values()];
      this.waiting.clear();
      await Promise.all(groups.map(({ store, outcomes }) => this.write(store, outcomes)));
    }
    this.writing = null;
  }

  private async write(store: AccountStore, outcomes: Outcome[]): Promise<void> {
    let written: string[][];
    try {
      written = await store.recordAttempts(outcomes.map((o) => o.record));
    } catch (error) {
      if (outcomes.length > 1) {
        // One outcome the object refuses must not hold back the others: each on its own.
        for (const outcome of outcomes) await this.write(store, [outcome]);
        return;
      }
      // Not written: the lease keeps others off it until it runs out, then the message (or the account's
      // alarm) brings it back; a mail sent twice that way keeps its Message-ID.
      console.error('delivery outcome not recorded', outcomes[0]!.email.id, error);
      outcomes[0]!.message.retry({ delaySeconds: this.unwrittenDelaySeconds });
      return;
    }
    for (const outcome of outcomes) {
      if (outcome.retryInSeconds !== null) outcome.message.retry({ delaySeconds: outcome.retryInSeconds });
      else outcome.message.ack();
    }
    await Promise.all([
      this.finish(outcomes.filter((o) => o.retryInSeconds === null)),
      queueDeliveries(this.env, outcomes[0]!.email.accountId, written.flat()),
      this.indexProviderIds(outcomes),
    ]);
  }

  /** Finished mail needs its attachments no more (a failed delete leaves them to R2's lifecycle rule). */
  private async finish(finished: Outcome[]): Promise<void> {
    const metas = finished.flatMap((o) => o.email.attachments);
    if (metas.length === 0) return;
    const { attachments } = await bucketsOf(this.env, finished[0]!.email.accountId);
    await deleteAttachments(attachments, metas).catch(() => undefined);
  }

  /** The provider's events name only its ids (an event before they are indexed waits on the event queue). */
  private async indexProviderIds(outcomes: Outcome[]): Promise<void> {
    const ids = outcomes.flatMap((o) => o.providerIds);
    if (ids.length === 0) return;
    await noteProviderIds(this.env, outcomes[0]!.email.accountId, ids).catch((error: unknown) =>
      console.error('provider ids not indexed', outcomes.map((o) => o.email.id).join(' '), String(error)),
    );
  }
}
