import { execFileSync } from 'node:child_process';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { configDefaults, defineConfig } from 'vitest/config';

// The browser element as browser/postcode-otp.js is now, for the Worker under test to serve (vendor/sdk).
execFileSync(process.execPath, ['scripts/build-browser.mjs'], { stdio: 'ignore' });

/** A project of tests inside workerd, with the test servers and the migrations. */
const workersProject = (name: string, include: string[]) => ({
  extends: false,
  plugins: [
    cloudflareTest(async ({ inject }) => ({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        bindings: {
          SMTP_HOST: '127.0.0.1',
          SMTP_PORT: String(inject('smtpPort')),
          SMTP_SECURE: 'none',
          INBOX_URL: inject('inboxUrl'),
          SILENT_SMTP_PORT: String(inject('silentSmtpPort')),
          LOCKSTEP_SMTP_PORT: String(inject('lockstepSmtpPort')),
          LOCKSTEP_INBOX_URL: inject('lockstepInboxUrl'),
          LENIENT_SMTP_PORT: String(inject('lenientSmtpPort')),
          STARTTLS_SMTP_PORT: String(inject('starttlsSmtpPort')),
          STARTTLS_INBOX_URL: inject('starttlsInboxUrl'),
          TLS_SMTP_PORT: String(inject('tlsSmtpPort')),
          TLS_INBOX_URL: inject('tlsInboxUrl'),
          AUTH_SMTP_PORT: String(inject('authSmtpPort')),
          AUTH_INBOX_URL: inject('authInboxUrl'),
          HELO_SMTP_PORT: String(inject('heloSmtpPort')),
          MAILDEV_SMTP_PORT: String(inject('maildevSmtpPort')),
          MAILDEV_URL: inject('maildevUrl'),
          WEBHOOK_RECEIVER_URL: inject('webhookReceiverUrl'),
          FILE_SERVER_URL: inject('fileServerUrl'),
          DKIM_VERIFIER_URL: inject('dkimVerifierUrl'),
          DNS_STUB_URL: inject('dnsStubUrl'),
          TURNSTILE_STUB_URL: inject('turnstileStubUrl'),
          FLAKY_SMTP_PORT: String(inject('flakySmtpPort')),
          FLAKY_CONTROL_URL: inject('flakyControlUrl'),
          FLAKY_INBOX_URL: inject('flakyInboxUrl'),
          DOWN_SMTP_PORT: String(inject('downSmtpPort')),
          // The receiver listens on http://127.0.0.1 (production accepts only public https).
          WEBHOOK_ALLOW_INSECURE: 'true',
          ADMIN_TOKEN: 'test-admin-token',
          OTP_PEPPER: 'test-pepper',
          DKIM_KEY_SECRET: 'test-dkim-key-secret',
          DNS_RESOLVER_URL: `${inject('dnsStubUrl')}/dns-query`,
          TURNSTILE_VERIFY_URL: `${inject('turnstileStubUrl')}/siteverify`,
          RETURN_PATH_MX: 'mx.postcode.test',
          INBOUND_DOMAIN: 'inbound.postcode.test',
          SPF_INCLUDE: 'spf.relay.test',
          PUBLIC_BASE_URL: 'http://postcode.test',
          // Retries without waiting, so retry-to-dead-letter runs end to end in seconds.
          MAIL_RETRY_BASE_SECONDS: '0',
          // No doubling wait between OTP sends to one address, so tests of resends and of the other limits can
          // send several codes at once; the wait's own tests set it (test/routes/otp, test/durable-objects).
          RATE_OTP_BACKOFF_SECONDS: '0',
          TEST_MIGRATIONS: await readD1Migrations('./migrations'),
        },
      },
    })),
  ],
  test: {
    name,
    globalSetup: ['./test/support/node/global-setup.ts'],
    setupFiles: ['./test/support/apply-migrations.ts'],
    include,
    exclude: [...configDefaults.exclude, 'test/e2e/**'],
    // Most files wait on real timers and servers (retries, timeouts) rather than on the CPU: four at a time
    // finish the project about three times sooner than one at a time on two cores.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

export default defineConfig({
  test: {
    projects: [
      // Unit and integration tests inside workerd.
      workersProject('workers', ['test/**/*.test.ts']),
      // `npm run bench:store`: what an email costs the stores over its life (not part of `npm test`).
      workersProject('measure', ['test/measure/**/*.measure.ts']),
      {
        // End to end in Node: the service as `npm start` runs it, driven by a real headless Chromium.
        extends: false,
        test: {
          name: 'e2e',
          environment: 'node',
          globalSetup: ['./test/e2e/global-setup.ts'],
          include: ['test/e2e/**/*.test.ts'],
          // Each file starts its own services; the longest (crash recovery) sets the project's time.
          maxWorkers: 4,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
