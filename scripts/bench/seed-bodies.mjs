// The bodies of the emails the scale bench reads whole: written into the local R2 bucket that wrangler dev
// keeps under its state directory (while it is stopped), as the app stores them at accept (one JSON object
// under the email's id, src/mail/bodies.ts). Only these are written: 1M bodies of 33 KB would be 33 GB of
// R2 the bench never reads, and D1 (what the bench measures) holds none of them.

import { join } from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { bodyMaker } from './seed-content.mjs';

/** The binding and bucket of wrangler.toml. */
const BODIES = { BODIES: 'postcode-bodies' };

/** Writes a 30 KB html + 3 KB text body for each of `ids` that `written` does not hold yet. */
export async function seedBodies(stateDir, ids, written) {
  const missing = ids.filter((id) => !written.has(id));
  if (missing.length === 0) return 0;
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: 'export default {}',
      r2Buckets: BODIES,
      resourcePersistencePath: join(stateDir, 'v3'),
    }),
  );
  try {
    const bucket = await mf.getR2Bucket('BODIES');
    const bodies = bodyMaker(3);
    for (const id of missing) {
      const subject = `Your receipt ${id}`;
      const body = { html: bodies.html(subject, 'there'), text: bodies.text(subject, 'there') };
      await bucket.put(id, JSON.stringify(body), { httpMetadata: { contentType: 'application/json' } });
      written.add(id);
    }
  } finally {
    await mf.dispose();
  }
  return missing.length;
}
