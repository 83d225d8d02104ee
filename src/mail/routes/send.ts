// One mail through the delivery routes in order (MAIL_ROUTES): a route that fails as a route (refused, reset,
// silent, TLS, 421, a 4xx to MAIL FROM) counts against its breaker and the same attempt goes on to the next
// one. A recipient a route refused for good (5xx) is not offered to the next: that answer is final everywhere.
import { waitUntil } from 'cloudflare:workers';
import type { MailRoute } from '../../config';
import type { Bindings } from '../../env';
import type { OutgoingMail, RecipientRefusal } from '../outgoing';
import {
  classifySmtpError,
  outcomeOfRefusals,
  SmtpConnection,
  type SmtpFailure,
  type SmtpOutcome,
} from '../smtp/connection';
import { type PendingConnection, sendOnce, startConnecting, withinTime } from '../smtp/send-once';
import { breakerState, mayUse, routeFailed, routeSucceeded } from './breaker';
import { type CloudflareOutcome, sendThroughCloudflare } from './cloudflare';

/** A route that failed as a route during the attempt, and what it said, when a next route was then tried. */
export type Failover = { route: string; reply: string };

/**
 * What the routes made of one mail: the outcome of the route that answered (`route`; null when none could be
 * tried), the provider's message id per recipient where it names one, and the routes failed over on the way.
 */
export type RouteOutcome = SmtpOutcome & {
  route: string | null;
  providerIds?: Record<string, string>;
  failovers: Failover[];
};

/** The breaker's key: a route's name and, for a relay, where it points (another configuration, another route). */
export const routeKey = (route: MailRoute) =>
  route.kind === 'smtp' ? `${route.name}@${route.smtp.host}:${route.smtp.port}` : route.name;

type Attempt = (route: MailRoute, mail: OutgoingMail, last: boolean) => Promise<CloudflareOutcome>;

const isRouteFault = (outcome: SmtpOutcome) => outcome.kind === 'transient' && outcome.routeFault === true;

/** A route's failure as a route, and the route. */
type Fault = SmtpFailure & { route: string };

/**
 * The routes a retry probed past their open breaker (see `throughRoutes`), shared by the mail of one batch so
 * that a dead route costs a batch one probe, not one per mail.
 */
export type Probed = Set<string>;

/**
 * The routes in order, skipping those whose breaker is open. `probed` (a retry: the mail was tried before):
 * when every other route failed or was skipped, the retry itself probes the skipped ones, each once per
 * `probed`, rather than waiting for the breaker (which would defer the mail again for nothing, and an OTP
 * code past its life). A route's failure is a failover (`rerouted`) only when a next route is then tried.
 */
async function throughRoutes(
  routes: MailRoute[],
  mail: OutgoingMail,
  attempt: Attempt,
  probed: Probed | null = null,
): Promise<RouteOutcome> {
  const envelope = mail.envelopeTo ?? mail.to;
  const failovers: Failover[] = [];
  const refusedForGood: RecipientRefusal[] = [];
  let lastFault: Fault | null = null;
  /** The recipients no route has refused for good. */
  const waitingNow = () => {
    const final = new Set(refusedForGood.map((r) => r.email));
    return envelope.filter((address) => !final.has(address));
  };
  /** The route's answer, or null when it failed as a route. */
  const tryRoute = async (route: MailRoute, waiting: string[], last: boolean): Promise<RouteOutcome | null> => {
    if (lastFault) failovers.push({ route: lastFault.route, reply: lastFault.reply });
    const outcome = await attempt(route, { ...mail, envelopeTo: waiting }, last).catch(classifySmtpError);
    if (!isRouteFault(outcome)) {
      routeSucceeded(routeKey(route));
      const refused = [...refusedForGood, ...(outcome.refused ?? [])];
      const merged = refusedForGood.length === 0 ? outcome : { ...outcome, refused };
      return { ...merged, route: route.name, failovers };
    }
    routeFailed(routeKey(route));
    refusedForGood.push(...(outcome.refused ?? []).filter((r) => r.permanent));
    lastFault = { ...(outcome as SmtpFailure), route: route.name };
    return null;
  };
  const skipped: MailRoute[] = [];
  for (const [index, route] of routes.entries()) {
    const waiting = waitingNow();
    if (waiting.length === 0) break;
    // Asked only on reaching the route: a half-open route counts the asking attempt as its probe.
    if (!mayUse(routeKey(route))) {
      skipped.push(route);
      continue;
    }
    const answered = await tryRoute(route, waiting, index === routes.length - 1);
    if (answered) return answered;
  }
  const probes = probed ? skipped.filter((route) => !probed.has(routeKey(route))) : [];
  for (const [index, route] of probes.entries()) {
    const waiting = waitingNow();
    if (waiting.length === 0) break;
    probed!.add(routeKey(route));
    const answered = await tryRoute(route, waiting, index === probes.length - 1);
    if (answered) return answered;
  }
  // Set inside `tryRoute`, which the compiler does not follow.
  const fault = lastFault as Fault | null;
  if (refusedForGood.length === envelope.length) {
    return { ...outcomeOfRefusals(envelope.length, refusedForGood), route: fault?.route ?? null, failovers };
  }
  if (fault) {
    const waitingRefusals = (fault.refused ?? []).filter((r) => !r.permanent);
    return { ...fault, refused: [...refusedForGood, ...waitingRefusals], failovers };
  }
  const reply = 'every delivery route is failing (its circuit breaker is open): retried later';
  return { kind: 'transient', reply, refused: [], routeFault: true, route: null, failovers };
}

/**
 * The routes of a queue batch: each SMTP route's connection opened for the first mail that needs it, dropped
 * after a transient failure or a session out of step, closed when the batch is done.
 */
export class BatchRoutes {
  private readonly connections = new Map<string, SmtpConnection>();

  constructor(
    private readonly env: Bindings,
    private readonly routes: MailRoute[],
    private readonly probed: Probed = new Set(),
  ) {}

  /** `retry`: the mail was tried before (a retry may probe a route whose breaker is open). */
  send(mail: OutgoingMail, retry = false): Promise<RouteOutcome> {
    const attempt: Attempt = (route, each) => this.attempt(route, each);
    return throughRoutes(this.routes, mail, attempt, retry ? this.probed : null);
  }

  private async attempt(route: MailRoute, mail: OutgoingMail): Promise<CloudflareOutcome> {
    if (route.kind === 'cloudflare') return sendThroughCloudflare(this.env.EMAIL, mail);
    let connection = this.connections.get(route.name);
    if (!connection) {
      connection = await SmtpConnection.open(route.smtp);
      this.connections.set(route.name, connection);
    }
    const outcome = await connection.send(mail);
    if (outcome.kind === 'transient' || !connection.usable) {
      this.connections.delete(route.name);
      await connection.close();
    }
    return outcome;
  }

  async close(): Promise<void> {
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((connection) => connection.close()));
  }
}

/** A connection being opened to the route a one-off send will try first (see `startFirstRoute`). */
export type FirstRoute = { name: string; pending: PendingConnection } | null;

/**
 * Starts opening a connection to the first route that is not failing, so the handshake overlaps the rest of
 * the request; null when that route is not an SMTP relay (or none is usable now).
 */
export function startFirstRoute(routes: MailRoute[]): FirstRoute {
  const first = routes.find((route) => breakerState(routeKey(route)) === 'closed');
  return first?.kind === 'smtp' ? { name: first.name, pending: startConnecting(first.smtp) } : null;
}

/** Closes a connection that will carry no mail (the request failed before its mail was ready). */
export function dropFirstRoute(first: FirstRoute): void {
  if (!first) return;
  waitUntil(first.pending.then((c) => (c instanceof SmtpConnection ? c.close() : undefined)));
}

/**
 * One mail over connections of its own (OTP code mail). With `waitMs`, the whole send is bounded: a route
 * that is not the last gets half of the time left, so a silent first route leaves time for the next.
 * Without it, each route gets its own timeout. `probed`: a retry's (see `throughRoutes`).
 */
export function sendOnceThroughRoutes(
  env: Bindings,
  routes: MailRoute[],
  mail: OutgoingMail,
  { first = null, waitMs, probed = null }: { first?: FirstRoute; waitMs?: number; probed?: Probed | null } = {},
): Promise<RouteOutcome> {
  const deadline = waitMs === undefined ? null : Date.now() + waitMs;
  let firstTaken = false;
  return throughRoutes(
    routes,
    mail,
    (route, each, last) => {
      const left = deadline === null ? null : Math.max(deadline - Date.now(), 1);
      const budget = left === null ? null : last ? left : Math.ceil(left / 2);
      if (route.kind === 'cloudflare') {
        const send = sendThroughCloudflare(env.EMAIL, each);
        if (budget === null) return send;
        return withinTime(send, budget, () => ({
          kind: 'transient',
          reply: `timeout after ${budget} ms`,
          routeFault: true,
        }));
      }
      const takesFirst = !firstTaken && first?.name === route.name;
      if (takesFirst) firstTaken = true;
      return sendOnce(route.smtp, each, takesFirst ? first!.pending : undefined, budget ?? route.smtp.timeoutMs);
    },
    probed,
  ).finally(() => {
    // A connection opened for a route the send never reached is closed unused.
    if (!firstTaken) dropFirstRoute(first);
  });
}
