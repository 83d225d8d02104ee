import type { TestProject } from 'vitest/node';
import { startDkimVerifier } from './dkim-verifier';
import { startDnsStub } from './dns-stub';
import { startFileServer } from './file-server';
import { startFlakyRelay } from './flaky-relay';
import { startMaildev } from './maildev';
import { startLenientServer, startSilentServer, startSmtpSink } from './smtp-sink';
import { testCertificate } from './test-ca';
import { startTurnstileStub } from './turnstile-stub';
import { startWebhookReceiver } from './webhook-receiver';

declare module 'vitest' {
  export interface ProvidedContext {
    smtpPort: number;
    inboxUrl: string;
    silentSmtpPort: number;
    lockstepSmtpPort: number;
    lockstepInboxUrl: string;
    lenientSmtpPort: number;
    starttlsSmtpPort: number;
    starttlsInboxUrl: string;
    tlsSmtpPort: number;
    tlsInboxUrl: string;
    authSmtpPort: number;
    authInboxUrl: string;
    heloSmtpPort: number;
    maildevSmtpPort: number;
    maildevUrl: string;
    webhookReceiverUrl: string;
    fileServerUrl: string;
    dkimVerifierUrl: string;
    dnsStubUrl: string;
    turnstileStubUrl: string;
    flakySmtpPort: number;
    flakyControlUrl: string;
    flakyInboxUrl: string;
    downSmtpPort: number;
  }
}

/** What the relays that require AUTH take (not a secret: test servers on 127.0.0.1). */
const RELAY_CREDENTIALS = { username: 'relay-user', password: 'pässwörd 1' };

export default async function setup(project: TestProject) {
  const sink = await startSmtpSink();
  project.provide('smtpPort', sink.smtpPort);
  project.provide('inboxUrl', sink.inboxUrl);
  const silent = await startSilentServer();
  project.provide('silentSmtpPort', silent.port);
  const lockstep = await startSmtpSink({ plain: true });
  project.provide('lockstepSmtpPort', lockstep.smtpPort);
  project.provide('lockstepInboxUrl', lockstep.inboxUrl);
  const lenient = await startLenientServer();
  project.provide('lenientSmtpPort', lenient.port);
  // Trusted through NODE_EXTRA_CA_CERTS, which `npm test` sets (see test-ca.ts).
  const certificate = testCertificate();
  const starttls = await startSmtpSink({ tls: { ...certificate, implicit: false } });
  project.provide('starttlsSmtpPort', starttls.smtpPort);
  project.provide('starttlsInboxUrl', starttls.inboxUrl);
  const implicitTls = await startSmtpSink({ tls: { ...certificate, implicit: true } });
  project.provide('tlsSmtpPort', implicitTls.smtpPort);
  project.provide('tlsInboxUrl', implicitTls.inboxUrl);
  // AUTH LOGIN only (maildev below offers PLAIN, over TLS); the credentials are the tests' (smtp.test.ts).
  const auth = await startSmtpSink({ auth: { methods: ['LOGIN'], ...RELAY_CREDENTIALS } });
  project.provide('authSmtpPort', auth.smtpPort);
  project.provide('authInboxUrl', auth.inboxUrl);
  const helo = await startLenientServer({ ehlo: false });
  project.provide('heloSmtpPort', helo.port);
  const maildev = await startMaildev(RELAY_CREDENTIALS);
  project.provide('maildevSmtpPort', maildev.smtpPort);
  project.provide('maildevUrl', maildev.webUrl);
  const receiver = await startWebhookReceiver();
  project.provide('webhookReceiverUrl', receiver.url);
  const files = await startFileServer();
  project.provide('fileServerUrl', files.url);
  const dkim = await startDkimVerifier();
  project.provide('dkimVerifierUrl', dkim.url);
  const dns = await startDnsStub();
  project.provide('dnsStubUrl', dns.url);
  const turnstile = await startTurnstileStub();
  project.provide('turnstileStubUrl', turnstile.url);
  const flaky = await startFlakyRelay();
  project.provide('flakySmtpPort', flaky.port);
  project.provide('flakyControlUrl', flaky.controlUrl);
  project.provide('flakyInboxUrl', flaky.inboxUrl);
  project.provide('downSmtpPort', flaky.downPort);
  return async () => {
    await flaky.close();
    await sink.close();
    await silent.close();
    await lockstep.close();
    await lenient.close();
    await starttls.close();
    await implicitTls.close();
    await auth.close();
    await helo.close();
    await maildev.close();
    await receiver.close();
    await files.close();
    await dkim.close();
    await dns.close();
    await turnstile.close();
  };
}
