// The mail a new member gets: which account, which role, and where to sign in. It is sent from the sign-in account,
// through the same pipeline as any account's mail (its send log keeps it).
import { config } from '../config';
import type { Bindings } from '../env';
import { acceptEmails } from '../mail/accept';
import type { Role } from './roles';
import { SIGN_IN_ACCOUNT } from './sign-in';

/** Mails the invitation; a failure is logged, never the adding's (the member can sign in either way). */
export async function mailInvitation(
  env: Bindings,
  invite: { email: string; role: Role; accountName: string; invitedBy: string },
): Promise<void> {
  const settings = config(env);
  if (settings.routes.length === 0) return;
  const signIn = `${settings.publicBaseUrl ?? ''}/dashboard/login`;
  const who = invite.invitedBy === 'operator' ? 'You were added' : `${invite.invitedBy} added you`;
  const request = {
    to: [invite.email],
    subject: `You were added to ${invite.accountName} on postcode`,
    text: `${who} to ${invite.accountName} on postcode, as ${invite.role}.\n\nSign in with this address (${invite.email}) at ${signIn}: a code is mailed to you each time.\n`,
  };
  try {
    await acceptEmails(env, { accountId: SIGN_IN_ACCOUNT, test: false }, [request], {
      countTowardsAllowance: false,
      jsonBody: '',
    });
  } catch (error) {
    console.error('invitation not mailed', invite.email, error);
  }
}
