// Relays of a test's own, made through the flaky relay's control API (test/support/node/flaky-relay.ts): no
// other test file changes their mode. `ok` passes connections to the flaky relay's sink (FLAKY_INBOX_URL) or
// to the server at `upstream`.
import { env } from 'cloudflare:workers';

export type RelayMode = 'ok' | 'reset' | '421' | 'silent' | 'refused' | 'ehlo550' | 'starttls454';

const control = async (path: string, method = 'GET') => {
  const res = await fetch(`${env.FLAKY_CONTROL_URL}${path}`, { method });
  if (!res.ok) throw new Error(`flaky relay ${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
};

/** A new relay in `mode`; its port, as a string like the bindings' ports. */
export async function newRelay(mode: RelayMode, upstream?: string): Promise<string> {
  const query = `m=${mode}${upstream ? `&upstream=${upstream}` : ''}`;
  const { port } = (await (await control(`/relays?${query}`, 'POST')).json()) as { port: number };
  return String(port);
}

export const setRelayMode = async (port: string, mode: RelayMode) => {
  await control(`/relays/${port}/mode?m=${mode}`, 'POST');
};

/** Connections the relay took in each mode since its mode was last set (`refused` ones never reach it). */
export const relayStats = async (port: string) =>
  (await (await control(`/relays/${port}/stats`)).json()) as Record<RelayMode, number>;

/** The verbs each connection sent, one list per connection, oldest first. */
export const relayCommands = async (port: string) =>
  (await (await control(`/relays/${port}/commands`)).json()) as string[][];
