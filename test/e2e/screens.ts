// Screenshots kept in the repository and compared with a tolerance, so that a layout regression fails a test.
// UPDATE_SCREENSHOTS=1 writes them instead (look at them before committing).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { expect } from 'vitest';

export const SCREENS = join(import.meta.dirname, 'screens');
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
/** Share of pixels that may differ (antialiasing); a changed word or colour moves far more. */
const MAX_DIFF_RATIO = 0.002;

/** `shot` against the committed screenshot `name` (a path under ./screens, without `.png`). */
export function expectScreenshot(shot: Buffer, name: string) {
  const file = join(SCREENS, `${name}.png`);
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, shot);
    return;
  }
  expect(existsSync(file), `${file} is missing: run with UPDATE_SCREENSHOTS=1 and look at it`).toBe(true);
  const expected = PNG.sync.read(readFileSync(file));
  const actual = PNG.sync.read(shot);
  const sizes = { expected: [expected.width, expected.height], actual: [actual.width, actual.height] };
  expect(sizes.actual, `${name}: size`).toEqual(sizes.expected);
  const diff = new PNG({ width: actual.width, height: actual.height });
  const differing = pixelmatch(expected.data, actual.data, diff.data, actual.width, actual.height, { threshold: 0.1 });
  if (differing / (actual.width * actual.height) > MAX_DIFF_RATIO) {
    const out = join(SCREENS, '__actual__', dirname(name));
    mkdirSync(out, { recursive: true });
    const base = name.split('/').at(-1)!;
    writeFileSync(join(out, `${base}.png`), shot);
    writeFileSync(join(out, `${base}.diff.png`), PNG.sync.write(diff));
    expect.fail(`${name}: ${differing} pixels differ from ${file} (see ${out})`);
  }
}
