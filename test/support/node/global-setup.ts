import type { TestProject } from 'vitest/node';
import { startFileServer } from './file-server';
import { startSilentServer, startSmtpSink } from './smtp-sink';
import { startWebhookReceiver } from './webhook-receiver';

declare module 'vitest' {
  export interface ProvidedContext {
    smtpPort: number;
    inboxUrl: string;
    silentSmtpPort: number;
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
  const receiver = await startWebhookReceiver();
  project.provide('webhookReceiverUrl', receiver.url);
  const files = await startFileServer();
  project.provide('fileServerUrl', files.url);
  return async () => {
    await sink.close();
    await silent.close();
    await receiver.close();
    await files.close();
  };
}
