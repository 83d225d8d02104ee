import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      INBOX_URL: string;
    }
    // Types `exports.default` from cloudflare:workers as our worker's default export.
    interface GlobalProps {
      mainModule: typeof import('../src/index');
    }
  }
}
