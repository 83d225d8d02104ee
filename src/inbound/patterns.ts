// Inbound route patterns and how an arriving address finds its route: `support@…` (exact), `support+*@…` (the
// sub-addresses of support, not support itself) or `*@…` (any). The most specific wins: exact, then sub-address,
// then any. Local parts compare case-insensitively.

/** Letters, digits and the atext most mail uses: no quoting, no `+` or `*` in a name. */
const ATEXT = "[A-Za-z0-9!#$%&'/=?^_`{|}~-]";
/**
 * A pattern's form (what the document states): `*`, a dot-atom name, or a name then `+*`, at most 64 characters
 * before the `@`; then a domain.
 */
export const PATTERN_SYNTAX = `^(?=[^@]{1,64}@)(\\*|${ATEXT}+(\\.${ATEXT}+)*(\\+\\*)?)@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$`;
const FORM = new RegExp(PATTERN_SYNTAX);

export type ParsedPattern = { localPart: string; domain: string };

/** The pattern as stored (lower-case local part and domain), or the reason it is not one. */
export function parsePattern(pattern: string): ParsedPattern | { error: string } {
  const text = pattern.trim().toLowerCase();
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return { error: 'expected local@domain, e.g. support@acme.inbound.example' };
  if (!FORM.test(text)) {
    return { error: 'the local part is a name (support), its sub-addresses (support+*) or * for any' };
  }
  return { localPart: text.slice(0, at), domain: text.slice(at + 1) };
}

/** How specific a stored local part is: 0 exact, 1 sub-addresses, 2 any. */
export const specificity = (localPart: string) => (localPart === '*' ? 2 : localPart.endsWith('+*') ? 1 : 0);

/** The route an address on the routes' domain takes, or null (then the mail is refused: nothing is implicit). */
export function matchRoute<R extends { localPart: string }>(routes: R[], address: string): R | null {
  const local = address.slice(0, address.lastIndexOf('@')).toLowerCase();
  const plus = local.indexOf('+');
  const wanted = [local, ...(plus > 0 ? [`${local.slice(0, plus)}+*`] : []), '*'];
  for (const localPart of wanted) {
    const route = routes.find((r) => r.localPart === localPart);
    if (route) return route;
  }
  return null;
}
