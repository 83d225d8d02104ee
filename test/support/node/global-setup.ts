import type { TestProject } from 'vitest/node';
import { startSilentServer, startSmtpSink } from './smtp-sink';

declare module 'vitest' {
  export interface ProvidedContext {
    smtpPort: number;
    inboxUrl: string;
    silentSmtpPort: number;
  }
}

export default async function setup(project: TestProject) {
  const sink = await startSmtpSink();
  project.provide('smtpPort', sink.smtpPort);
  project.provide('inboxUrl', sink.inboxUrl);
  const silent = await startSilentServer();
  project.provide('silentSmtpPort', silent.port);
  return async () => {
    await sink.close();
    await silent.close();
  };
}
