// `{{ name }}` placeholders. HTML bodies get HTML-escaped values; subject and text get them as they are.
import { ApiError } from '../errors';
import { MAX_JSON_BODY_BYTES } from '../middleware/json-body';

export type TemplateVars = Record<string, string | number | boolean>;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/** Placeholder names used in the given texts that `vars` does not supply (sorted, unique). */
export function missingVars(texts: (string | null | undefined)[], vars: TemplateVars): string[] {
  const missing = new Set<string>();
  for (const text of texts) {
    for (const match of (text ?? '').matchAll(PLACEHOLDER)) {
      if (!Object.hasOwn(vars, match[1]!)) missing.add(match[1]!);
    }
  }
  return [...missing].sort();
}

/** Fills placeholders; callers check `missingVars` first so nothing goes out half-filled. */
export function fillTemplate(text: string, vars: TemplateVars, mode: 'html' | 'plain'): string {
  return text.replace(PLACEHOLDER, (_, name: string) => {
    const value = String(vars[name]);
    return mode === 'html' ? escapeHtml(value) : value;
  });
}

const utf8 = new TextEncoder();
const byteLength = (text: string) => utf8.encode(text).byteLength;

/** The UTF-8 size of `fillTemplate(text, vars, mode)`, from the placeholders and the values' sizes (nothing filled). */
export function filledSize(text: string, vars: TemplateVars, mode: 'html' | 'plain'): number {
  const valueSizes = new Map<string, number>();
  let size = byteLength(text);
  for (const [placeholder, name] of text.matchAll(PLACEHOLDER)) {
    let valueSize = valueSizes.get(name!);
    if (valueSize === undefined) {
      const value = String(vars[name!]);
      valueSize = byteLength(mode === 'html' ? escapeHtml(value) : value);
      valueSizes.set(name!, valueSize);
    }
    size += valueSize - byteLength(placeholder);
  }
  return size;
}

/**
 * What a message's texts may fill to: what a request body may carry. A short template with a long value
 * repeated would otherwise fill to hundreds of megabytes, more than a Worker has.
 */
const MAX_FILLED_BYTES = MAX_JSON_BODY_BYTES;

/** Refuses (400, `what` names the source) texts that would fill past what a message may carry, before filling. */
export function checkFilledSize(
  texts: { text: string | null | undefined; mode: 'html' | 'plain' }[],
  vars: TemplateVars,
  what: string,
): void {
  const size = texts.reduce((sum, { text, mode }) => sum + (text ? filledSize(text, vars, mode) : 0), 0);
  if (size > MAX_FILLED_BYTES) {
    throw new ApiError(
      'INVALID_INPUT',
      `${what} renders to ${size} bytes with these vars, over the ${MAX_FILLED_BYTES} a message may carry`,
    );
  }
}
