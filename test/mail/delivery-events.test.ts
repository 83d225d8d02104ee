// The rule of what a report after the relay does to a recipient (src/mail/delivery-events.ts), for bounces: the
// type a reason implies, which bounces suppress the address, and which upgrade a recipient already BOUNCED.
import { describe, expect, it } from 'vitest';
import { BOUNCE_REASONS, HARD_BOUNCE_REASONS } from '../../src/mail/bounce-reasons';
import { changeOf, type DeliveryEvent, type RecipientState } from '../../src/mail/delivery-events';

const bounce = (fields: Partial<DeliveryEvent> = {}): DeliveryEvent => ({
  target: { emailId: 'em_x' },
  recipient: 'ada@example.com',
  kind: 'bounced',
  diagnostic: null,
  route: null,
  ...fields,
});
const SENT: RecipientState = { status: 'SENT', bounceType: null };

describe('changeOf: bounces', () => {
  it('every reason: hard and suppressed for an address that cannot receive, else soft or undetermined and kept', () => {
    const hard = new Set<string>(HARD_BOUNCE_REASONS);
    for (const reason of BOUNCE_REASONS) {
      const type = hard.has(reason) ? 'hard' : reason === 'undetermined' ? 'undetermined' : 'soft';
      expect(changeOf(SENT, bounce({ bounceReason: reason })), reason).toEqual({
        status: 'BOUNCED',
        bounceType: type,
        bounceReason: reason,
        timeline: 'bounced',
        webhook: 'email.bounced',
        suppress: type === 'hard' ? 'hard_bounce' : null,
      });
    }
    expect(HARD_BOUNCE_REASONS).toEqual(['user_unknown', 'host_unknown', 'has_moved', 'not_accept']);
  });

  it('without a reason: undetermined, unless the report gives a type, which then decides alone', () => {
    expect(changeOf(SENT, bounce())).toMatchObject({
      bounceType: 'undetermined',
      bounceReason: 'undetermined',
      suppress: null,
    });
    expect(changeOf(SENT, bounce({ bounceType: 'hard' }))).toMatchObject({
      bounceType: 'hard',
      bounceReason: 'undetermined',
      suppress: 'hard_bounce',
    });
    expect(changeOf(SENT, bounce({ bounceType: 'soft', bounceReason: 'user_unknown' }))).toMatchObject({
      bounceType: 'soft',
      suppress: null,
    });
    expect(changeOf(SENT, bounce({ bounceType: 'undetermined', bounceReason: 'has_moved' }))).toMatchObject({
      suppress: null,
    });
  });

  it('a delivered recipient may bounce; a soft or undetermined bounce becomes hard, nothing else moves it', () => {
    expect(changeOf({ status: 'DELIVERED', bounceType: null }, bounce({ bounceReason: 'mailbox_full' }))).toMatchObject(
      { status: 'BOUNCED', bounceType: 'soft' },
    );
    for (const before of ['soft', 'undetermined'] as const) {
      const bounced: RecipientState = { status: 'BOUNCED', bounceType: before };
      expect(changeOf(bounced, bounce({ bounceReason: 'user_unknown' })), before).toMatchObject({
        bounceType: 'hard',
        bounceReason: 'user_unknown',
        suppress: 'hard_bounce',
      });
      expect(changeOf(bounced, bounce({ bounceReason: 'blocked' })), before).toBe('ignore');
      expect(changeOf(bounced, bounce()), before).toBe('ignore');
    }
    const hard: RecipientState = { status: 'BOUNCED', bounceType: 'hard' };
    expect(changeOf(hard, bounce({ bounceReason: 'host_unknown' }))).toBe('ignore');
    expect(changeOf({ status: 'COMPLAINED', bounceType: null }, bounce({ bounceReason: 'user_unknown' }))).toBe(
      'ignore',
    );
    expect(changeOf({ status: 'QUEUED', bounceType: null }, bounce())).toBe('wait');
  });

  it('what is no bounce carries no type and no reason', () => {
    for (const kind of ['delivered', 'deferred', 'complained', 'failed', 'suppressed'] as const) {
      expect(changeOf(SENT, bounce({ kind, bounceReason: 'blocked' })), kind).toMatchObject({
        bounceType: null,
        bounceReason: null,
      });
    }
  });
});
