// `{{ name }}` placeholders: HTML-escaped in HTML bodies, literal in text and subject; nothing half-filled.
import { describe, expect, it } from 'vitest';
import { checkFilledSize, escapeHtml, filledSize, fillTemplate, missingVars } from '../../src/mail/template';

const APOS = /&#39;|&#x27;|&apos;/i;

describe('escapeHtml', () => {
  it('escapes & < > " and \'', () => {
    const escaped = escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`);
    expect(escaped).not.toMatch(/[<>"']/);
    expect(escaped.replace(APOS, "'").replace(APOS, "'")).toBe(
      `&lt;a href=&quot;x&quot; title='y'&gt;Tom &amp; Jerry&lt;/a&gt;`,
    );
  });

  it('escapes an ampersand once, also in what looks like an entity', () => {
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
    expect(escapeHtml('&&')).toBe('&amp;&amp;');
  });

  it('leaves other text alone', () => {
    expect(escapeHtml('Bücher {{ x }} 100% $1')).toBe('Bücher {{ x }} 100% $1');
    expect(escapeHtml('')).toBe('');
  });
});

describe('fillTemplate', () => {
  it('replaces {{name}} with or without spaces inside the braces', () => {
    const vars = { name: 'Ann' };
    for (const text of ['Hi {{name}}!', 'Hi {{ name }}!', 'Hi {{   name   }}!', 'Hi {{name }}!', 'Hi {{ name}}!']) {
      expect(fillTemplate(text, vars, 'plain'), text).toBe('Hi Ann!');
      expect(fillTemplate(text, vars, 'html'), text).toBe('Hi Ann!');
    }
  });

  it('replaces every occurrence and several names', () => {
    expect(fillTemplate('{{a}}-{{ b }}-{{a}}', { a: '1', b: '2' }, 'plain')).toBe('1-2-1');
  });

  it('html mode escapes the value, not the template', () => {
    const value = `<script>alert("x" & 'y')</script>`;
    const filled = fillTemplate('<p title="t">{{ v }}</p>', { v: value }, 'html');
    expect(filled.startsWith('<p title="t">')).toBe(true);
    expect(filled.endsWith('</p>')).toBe(true);
    const inner = filled.slice('<p title="t">'.length, -'</p>'.length);
    expect(inner).not.toMatch(/[<>"']/);
    expect(inner.replace(APOS, "'").replace(APOS, "'")).toBe(
      `&lt;script&gt;alert(&quot;x&quot; &amp; 'y')&lt;/script&gt;`,
    );
  });

  it('plain mode inserts the value literally', () => {
    const value = `<b>"Tom" & 'Jerry'</b>`;
    expect(fillTemplate('Hello {{ v }}', { v: value }, 'plain')).toBe(`Hello ${value}`);
  });

  it('values that look like placeholders are not expanded again', () => {
    const vars = { a: '{{b}}', b: 'B', c: '{{ c }}' };
    expect(fillTemplate('{{a}} {{b}} {{c}}', vars, 'plain')).toBe('{{b}} B {{ c }}');
    expect(fillTemplate('{{a}} {{b}}', vars, 'html')).toBe('{{b}} B');
  });

  it('replacement patterns in values are taken literally', () => {
    expect(fillTemplate('x{{a}}y', { a: "$& $1 $$ $` $'" }, 'plain')).toBe("x$& $1 $$ $` $'y");
  });

  it('numbers and booleans are stringified', () => {
    const vars = { n: 42, f: 1.5, z: 0, neg: -3, t: true, no: false };
    expect(fillTemplate('{{n}} {{f}} {{z}} {{neg}} {{t}} {{no}}', vars, 'plain')).toBe('42 1.5 0 -3 true false');
    expect(fillTemplate('{{n}} {{no}}', vars, 'html')).toBe('42 false');
  });

  it('an empty string is a value', () => {
    expect(fillTemplate('[{{ e }}]', { e: '' }, 'plain')).toBe('[]');
  });

  it('text that is not a placeholder stays as it is', () => {
    const text = '{name} {{}} {{ }} { {x} } {{x y}}';
    expect(fillTemplate(text, { name: 'N', x: 'X' }, 'plain')).toBe(text);
  });
});

describe('missingVars', () => {
  it('names every placeholder without a value, sorted and unique, across all texts', () => {
    const texts = ['Hi {{ zed }} and {{alpha}}', null, undefined, '{{zed}} {{ mid }} {{alpha}}', '{{ present }}'];
    expect(missingVars(texts, { present: 'x' })).toEqual(['alpha', 'mid', 'zed']);
  });

  it('is empty when everything is supplied, including falsy values', () => {
    expect(missingVars(['{{a}} {{ b }} {{c}} {{d}}'], { a: '', b: 0, c: false, d: 'x' })).toEqual([]);
    expect(missingVars(['no placeholders here'], {})).toEqual([]);
    expect(missingVars([null, undefined], {})).toEqual([]);
  });

  it('extra vars are not a problem', () => {
    expect(missingVars(['{{a}}'], { a: '1', unused: '2' })).toEqual([]);
  });

  it('names inherited from Object.prototype are still missing', () => {
    expect(missingVars(['{{toString}} {{ constructor }} {{__proto__}}'], {})).toEqual([
      '__proto__',
      'constructor',
      'toString',
    ]);
  });

  it('finds a name once whatever the spacing', () => {
    expect(missingVars(['{{x}}', '{{ x }}', '{{  x}}'], {})).toEqual(['x']);
  });
});

describe('filledSize', () => {
  const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

  it('is the UTF-8 size of what fillTemplate makes, escaping and multi-byte characters included', () => {
    const vars = { a: 'Bücher & <Söhne>', b: 42, c: '', d: '😀"\'', e: true };
    for (const text of [
      '',
      'no placeholders, but ünïcode',
      '{{a}}{{ a }}{{  b}} [{{c}}] {{d}} {{e}} {{a}}',
      `<p>{{\u00a0a\u00a0}}</p> ${'{{d}}'.repeat(50)}`,
      '{name} {{}} {{ x y }} {{a}}',
    ]) {
      for (const mode of ['html', 'plain'] as const) {
        expect(filledSize(text, vars, mode), `${mode}: ${text}`).toBe(bytes(fillTemplate(text, vars, mode)));
      }
    }
  });
});

describe('checkFilledSize', () => {
  it('refuses texts that fill past the limit, naming what and the size, without filling them', () => {
    const texts = [
      { text: 'Hi {{x}}', mode: 'plain' as const },
      { text: '{{x}}'.repeat(4000), mode: 'html' as const },
      { text: null, mode: 'plain' as const },
    ];
    expect(() => checkFilledSize(texts, { x: 'a'.repeat(100) }, 'templateId: template tpl_1')).not.toThrow();
    expect(() => checkFilledSize(texts, { x: 'y'.repeat(50_000) }, 'templateId: template tpl_1')).toThrow(
      'templateId: template tpl_1 renders to 200050003 bytes with these vars, over the 524288 a message may carry',
    );
  });
});
