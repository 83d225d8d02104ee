// The SDK (`postcode`, built by `npm ci` into sdk/dist) where users run it: a Node script sending through it against
// the service as `npm start` runs it, and a Worker importing it, built by wrangler without nodejs_compat, whose
// bundle stays under 64 KiB unminified (the size is printed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from './browser';
import { service, succeeded } from './shared-service';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = join(root, 'test/e2e/fixtures');

describe('the SDK where users run it', () => {
  it('a Node script sends an email through it, and the email goes out', async () => {
    const to = uniqueEmail('sdk-node');
    const run = spawnSync(process.execPath, [join(fixtures, 'sdk-node.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, POSTCODE_BASE_URL: service.baseUrl, POSTCODE_API_KEY: service.mailKey, SEND_TO: to },
    });
    expect(run.status, run.stderr).toBe(0);
    const { data, error } = JSON.parse(run.stdout) as { data: { id: string }; error: unknown };
    expect(error).toBeNull();
    expect(data.id).toMatch(/^em_/);
    await expect
      .poll(
        async () => (await succeeded<{ status: string }>('GET', `/api/v1/emails/${data.id}`, service.mailKey)).status,
        {
          timeout: 30_000,
        },
      )
      .toBe('SENT');
  });

  it('a Worker importing it builds without nodejs_compat, under 64 KiB unminified', () => {
    const out = mkdtempSync(join(tmpdir(), 'postcode-sdk-worker-'));
    try {
      const build = spawnSync(
        join(root, 'node_modules/.bin/wrangler'),
        ['deploy', '--dry-run', '--outdir', out, '--config', join(fixtures, 'sdk-worker/wrangler.toml')],
        {
          cwd: root,
          encoding: 'utf8',
          env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false' },
        },
      );
      expect(build.status, build.stdout + build.stderr).toBe(0);
      const bundle = readFileSync(join(out, 'index.js'), 'utf8');
      const bytes = Buffer.byteLength(bundle);
      console.log(`a Worker sending one email through the SDK: ${bytes} bytes unminified (64 KiB = 65536 allowed)`);
      expect(bundle).toContain('Idempotency-Key'); // the SDK is in it
      expect(bundle).not.toMatch(/from ["']node:/);
      expect(bytes).toBeLessThan(64 * 1024);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
