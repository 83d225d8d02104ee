// What the scale bench's seeded mail looks like: a seeded random source, ids of the app's shape, customer
// addresses, subjects and tags by category, and bodies of realistic size (about 30 KB html, 3 KB text) cut
// from a generated pool at paragraph boundaries, so that every email's body differs.

/** A deterministic random source in [0, 1) (mulberry32): the same seed gives the same data. */
export function randomSource(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
  const base32 = (length) => {
    let out = '';
    for (let i = 0; i < length; i++) out += BASE32[int(32)];
    return out;
  };
  const hex = (length) => {
    let out = '';
    for (let i = 0; i < length; i++) out += '0123456789abcdef'[int(16)];
    return out;
  };
  /** `em_…` and the like: 100 random bits as src/ids.ts makes them. */
  const id = (prefix) => `${prefix}_${base32(20)}`;
  /** An OTP session id: the recipient object's 64-hex id and 130 random bits. */
  const sessionId = () => `otp_${hex(64)}_${base32(26)}`;
  return { next, int, pick, base32, hex, id, sessionId };
}

const WORDS = `order account receipt payment invoice shipping delivery tracking package address billing total subtotal
  tax discount coupon item quantity price product service support help contact team thanks welcome confirm verify
  password reset secure sign login link expires minutes hours today tomorrow customer member plan subscription
  renewal monthly annual card ending refund return exchange warehouse courier arrived dispatched estimated window
  please note that your we our you this the and for with from about more details below above view manage update
  preferences unsubscribe privacy policy terms questions reply simply message happy glad ready next step start
  guide tips features dashboard settings profile security alert device location browser recent activity review`
  .split(/\s+/)
  .filter(Boolean);

const CATEGORIES = [
  { value: 'receipt', weight: 40, subject: (n) => `Your receipt #${n}` },
  { value: 'shipping', weight: 20, subject: (n) => `Your order #${n} has shipped` },
  { value: 'password-reset', weight: 12, subject: () => 'Reset your password' },
  { value: 'sign-in', weight: 12, subject: () => 'Your sign-in link' },
  { value: 'welcome', weight: 8, subject: () => 'Welcome aboard' },
  { value: 'invoice', weight: 8, subject: (n) => `Invoice INV-${n}` },
];
const CATEGORY_TOTAL = CATEGORIES.reduce((sum, c) => sum + c.weight, 0);

/** A category by its share of a transactional sender's mail. */
export function category(random) {
  let roll = random.int(CATEGORY_TOTAL);
  for (const c of CATEGORIES) {
    roll -= c.weight;
    if (roll < 0) return c;
  }
  return CATEGORIES[0];
}

const DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com', 'hotmail.com', 'proton.me', 'gmx.de'];
const FIRST = ['ada', 'grace', 'alan', 'edsger', 'barbara', 'donald', 'frances', 'ken', 'margaret', 'linus'];
const LAST = ['lovelace', 'hopper', 'turing', 'dijkstra', 'liskov', 'knuth', 'allen', 'thompson', 'hamilton'];

/**
 * Customer `n` of an account: one spelling (some mixed case, as users type them) and its canonical form
 * (src/mail/address.ts lowercases an ASCII address).
 */
export function customerAddress(accountIndex, n) {
  const local = `${FIRST[n % FIRST.length]}.${LAST[(n >> 3) % LAST.length]}${n}`;
  const domain = accountIndex === 0 ? DOMAINS[n % DOMAINS.length] : `customers${accountIndex}.example`;
  const address = n % 7 === 0 ? `${local[0].toUpperCase()}${local.slice(1)}@${domain}` : `${local}@${domain}`;
  return { address, canonical: address.toLowerCase() };
}

function paragraphs(random, count, html) {
  const out = [];
  for (let p = 0; p < count; p++) {
    const words = Array.from({ length: 20 + random.int(60) }, () => random.pick(WORDS));
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    const sentence = `${words.join(' ')}.`;
    out.push(
      html
        ? `<tr><td style="padding:8px 24px;font:14px/1.5 Helvetica,Arial,sans-serif;color:#333">${sentence}</td></tr>\n`
        : `${sentence}\n\n`,
    );
  }
  return out;
}

/** A pool of paragraphs and where each starts, to cut bodies from. */
function pool(random, count, html) {
  const parts = paragraphs(random, count, html);
  const starts = [];
  let text = '';
  for (const part of parts) {
    starts.push(text.length);
    text += part;
  }
  return { text, starts };
}

/** The body maker: `html(…)` about 30 KB, `text(…)` about 3 KB, each cut at its own place in the pool. */
export function bodyMaker(seed) {
  const random = randomSource(seed);
  const htmlPool = pool(random, 4000, true);
  const textPool = pool(random, 1200, false);
  const cut = ({ text, starts }, size) => {
    let first = random.int(starts.length);
    while (starts[first] + size > text.length) first = random.int(starts.length);
    let last = first;
    while (last < starts.length - 1 && starts[last] - starts[first] < size) last++;
    return text.slice(starts[first], starts[last]);
  };
  return {
    html(subject, name) {
      return `<!doctype html><html><head><meta charset="utf-8"><title>${subject}</title></head>
<body style="margin:0;background:#f4f4f7"><table role="presentation" width="100%" cellpadding="0" cellspacing="0">
<tr><td style="padding:24px;font:bold 20px Helvetica,Arial,sans-serif">${subject}</td></tr>
<tr><td style="padding:8px 24px">Hi ${name},</td></tr>
${cut(htmlPool, 27_000 + random.int(6_000))}<tr><td style="padding:24px;color:#999;font-size:12px">You receive this
mail because you have an account with us. <a href="https://example.com/preferences">Preferences</a></td></tr>
</table></body></html>`;
    },
    text(subject, name) {
      return `${subject}\n\nHi ${name},\n\n${cut(textPool, 2_600 + random.int(800))}You receive this mail because you have an account with us.\n`;
    },
  };
}
