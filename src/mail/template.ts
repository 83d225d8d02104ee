// `{{ name }}` placeholders. HTML bodies get HTML-escaped values; subject and text get them as they are.

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
