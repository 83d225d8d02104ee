import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      INBOX_URL: string;
      /** A TCP port that accepts connections and never greets (test/support/node/smtp-sink.ts). */
      SILENT_SMTP_PORT: string;
      /** A second sink that offers no PIPELINING, 8BITMIME or SMTPUTF8, and its inbox (test/support/node/smtp-sink.ts). */
      LOCKSTEP_SMTP_PORT: string;
      LOCKSTEP_INBOX_URL: string;
      /** A pipelining server that answers DATA with 354 after every RCPT TO was refused. */
      LENIENT_SMTP_PORT: string;
      /** Sinks behind TLS (a certificate of the run's test CA): STARTTLS, and TLS from the first byte. */
      STARTTLS_SMTP_PORT: string;
      STARTTLS_INBOX_URL: string;
      TLS_SMTP_PORT: string;
      TLS_INBOX_URL: string;
      /** A sink that requires AUTH LOGIN (relay-user), and its inbox. */
      AUTH_SMTP_PORT: string;
      AUTH_INBOX_URL: string;
      /** An old server: EHLO unknown, HELO answered, no extensions. */
      HELO_SMTP_PORT: string;
      /** maildev with TLS from the first byte and AUTH (PLAIN) required; its web API lists what arrived. */
      MAILDEV_SMTP_PORT: string;
      MAILDEV_URL: string;
      /** The webhook receiver (test/support/node/webhook-receiver.ts). */
      WEBHOOK_RECEIVER_URL: string;
      /** Attachment files served over http (test/support/node/file-server.ts). */
      FILE_SERVER_URL: string;
      DKIM_VERIFIER_URL: string;
      DNS_STUB_URL: string;
      /** The Siteverify stub (test/support/node/turnstile-stub.ts): its calls at /calls. */
      TURNSTILE_STUB_URL: string;
      /** A relay whose health the test sets, its control API and inbox (test/support/node/flaky-relay.ts). */
      FLAKY_SMTP_PORT: string;
      FLAKY_CONTROL_URL: string;
      FLAKY_INBOX_URL: string;
      /** A port nothing listens on: connecting is refused. */
      DOWN_SMTP_PORT: string;
    }
  }
}
