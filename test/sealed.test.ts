// Sealed values (src/sealed.ts): what was sealed opens under its secret and purpose only; OpenedOnce keeps what an
// isolate opened, at most its bound, and never a failure. DKIM keys and Turnstile secrets use both.
import { describe, expect, it } from 'vitest';
import { OpenedOnce, seal, unseal } from '../src/sealed';

const PURPOSE = { info: 'postcode test', name: 'test value' };

describe('seal and unseal', () => {
  it('round-trips under the same secret and purpose; another secret or purpose is refused', async () => {
    const sealed = await seal(new TextEncoder().encode('hello'), 'secret', PURPOSE);
    expect(new TextDecoder().decode(await unseal(sealed, 'secret', PURPOSE))).toBe('hello');
    await expect(unseal(sealed, 'other', PURPOSE)).rejects.toThrow();
    await expect(unseal(sealed, 'secret', { ...PURPOSE, info: 'another' })).rejects.toThrow();
  });
});

describe('OpenedOnce', () => {
  it('opens a key once, drops the oldest beyond its bound, and keeps no failure', async () => {
    const opened = new OpenedOnce<string>(2);
    let opens = 0;
    const open = (value: string) => async () => {
      opens++;
      return value;
    };
    expect(await opened.get('a', open('A'))).toBe('A');
    expect(await opened.get('a', open('changed'))).toBe('A');
    expect(opens).toBe(1);
    await opened.get('b', open('B'));
    await opened.get('c', open('C')); // drops a, the oldest
    expect(await opened.get('a', open('A2'))).toBe('A2');
    expect(opens).toBe(4);
    let fails = true;
    const flaky = async () => {
      if (fails) throw new Error('wrong secret');
      return 'ok';
    };
    await expect(opened.get('f', flaky)).rejects.toThrow('wrong secret');
    fails = false;
    expect(await opened.get('f', flaky)).toBe('ok');
  });
});
