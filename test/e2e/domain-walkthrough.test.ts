// The walk-through of docs/domains.md under `npm start`: add a domain, press verify (the local resolver
// publishes what the service asks for), send from it, and `npm run dkim:check` says pass (mailauth).
import { describe, expect, it } from 'vitest';
import { api, runScript } from './shared-service';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `npm run dkim:check -- <to>` as the walk-through runs it, against this service's inbox and resolver. */
const dkimCheck = (to: string) => runScript('dkim-check.mjs', to);

type Domain = { id: string; name: string; status: string; records: { purpose: string; status: string }[] };

describe('docs/domains.md: the walk-through under npm start', () => {
  it('add → verify → verified → send → DKIM pass; mail from the service sender is not signed', async () => {
    const name = `walk-${crypto.randomUUID().slice(0, 8)}.example`;
    const added = await api<Domain>('POST', '/api/v1/domains', { name });
    expect(added.status).toBe(201);
    expect(added.data.status).toBe('pending');
    const verified = await api<Domain>('POST', `/api/v1/domains/${added.data.id}/verify`);
    expect(verified.data.status).toBe('verified');
    expect(verified.data.records.every((r) => r.status === 'verified')).toBe(true);

    const to = `walk-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const sent = await api('POST', '/api/v1/emails', {
      from: `Acme <hello@${name}>`,
      to,
      subject: 'Hi',
      text: 'Hello',
    });
    expect(sent.status).toBe(200);
    let check = dkimCheck(to);
    for (let i = 0; i < 50 && check.output.includes('no mail to'); i++) {
      await sleep(200);
      check = dkimCheck(to);
    }
    expect(check.output).toContain(`dkim=pass d=${name}`);
    expect(check.code).toBe(0);

    const plain = `plain-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await api('POST', '/api/v1/emails', { to: plain, subject: 'Unsigned', text: 'x' });
    let unsigned = dkimCheck(plain);
    for (let i = 0; i < 50 && unsigned.output.includes('no mail to'); i++) {
      await sleep(200);
      unsigned = dkimCheck(plain);
    }
    expect(unsigned.output).toContain('dkim=none');
    expect(unsigned.code).toBe(1);
  });
});
