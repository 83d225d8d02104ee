import type { TestProject } from 'vitest/node';
import { startFileServer } from './file-server';
import { startLenientServer, startSilentServer, startSmtpSink } from './smtp-sink';
import { startWebhookReceiver } from './webhook-receiver';

declare module 'vitest' {
  export interface ProvidedContext {
    smtpPort: number;
    inboxUrl: string;
    silentSmtpPort: number;
    lockstepSmtpPort: number;
    lockstepInboxUrl: string;
    lenientSmtpPort: number;
    webhookReceiverUrl: string;
    fileServerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const sink = await startSmtpSink();
  project.provide('smtpPort', sink.smtpPort);
  project.provide('inboxUrl', sink.inboxUrl);
  const silent = await startSilentServer();
  project.provide('silentSmtpPort', silent.port);
  const lockstep = await startSmtpSink({ pipelining: false });
  project.provide('lockstepSmtpPort', lockstep.smtpPort);
  project.provide('lockstepInboxUrl', lockstep.inboxUrl);
  const lenient = await startLenientServer();
  project.provide('lenientSmtpPort', lenient.port);
  const receiver = await startWebhookReceiver();
  project.provide('webhookReceiverUrl', receiver.url);
  const files = await startFileServer();
  project.provide('fileServerUrl', files.url);
  return async () => {
    await sink.close();
    await silent.close();
    await lockstep.close();
    await lenient.close();
    await receiver.close();
    await files.close();
  };
}
