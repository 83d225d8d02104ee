import type { TestProject } from 'vitest/node';
import { startSmtpSink } from './smtp-sink';

declare module 'vitest' {
  export interface ProvidedContext {
    smtpPort: number;
    inboxUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const sink = await startSmtpSink();
  project.provide('smtpPort', sink.smtpPort);
  project.provide('inboxUrl', sink.inboxUrl);
  return () => sink.close();
}
