// The Worker's configuration as `npm start` will run it, checked with the Worker's own schema
// (configProblems in src/config.ts) before anything starts, so a bad variable is one line and an exit
// instead of a Worker that answers 500 to every request.
//
// Node runs that TypeScript through the hooks below (Node 22.15 or later; scripts/start.mjs makes sure):
// an extensionless relative import finds its `.ts` file, and types are removed in transform mode, which
// also turns parameter properties (src/errors.ts) into JavaScript.
import { readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !specifier.startsWith('.')) throw error;
      return nextResolve(`${specifier}.ts`, context);
    }
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
    const source = readFileSync(new URL(url), 'utf8');
    return {
      format: 'module',
      source: stripTypeScriptTypes(source, { mode: 'transform', sourceUrl: url }),
      shortCircuit: true,
    };
  },
});

/**
 * Imports a TypeScript module (the Worker's, or a local fixture), its path relative to this file; Node's one-time
 * notice that type stripping is experimental is left out.
 */
export async function importTypeScript(path) {
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!String(warning).includes('stripTypeScriptTypes')) emitWarning.call(process, warning, ...rest);
  };
  try {
    return await import(new URL(path, import.meta.url).href);
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * `NAME:value,NAME:value` (POSTCODE_EXTRA_VARS) as an object; a malformed entry or a name the Worker
 * does not read is a problem too (a typo would otherwise be ignored without a word).
 */
function parseExtraVars(text, known) {
  const vars = {};
  const problems = [];
  for (const entry of text.split(',').filter((part) => part.trim())) {
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon).trim() : '';
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) {
      problems.push(`POSTCODE_EXTRA_VARS: "${entry}" is not NAME:value`);
    } else if (!known.includes(name)) {
      problems.push(`POSTCODE_EXTRA_VARS: ${name} is not a variable of the Worker (see docs/configuration.md)`);
    } else {
      vars[name] = entry.slice(colon + 1);
    }
  }
  return { vars, problems };
}

/**
 * The variables `wrangler dev` will hand the Worker, in wrangler's order (wrangler.toml's [vars], then
 * .dev.vars, then `--var`: the start script's own and POSTCODE_EXTRA_VARS), and one line per problem,
 * each naming the variable, where its value came from, and the rule it breaks. Values are not printed:
 * some are secrets.
 */
export async function checkStartConfig({ root, startVars, extraVars }) {
  const { configProblems, variableProblems, CONFIG_VARIABLES } = await importTypeScript('../src/config.ts');
  const extra = parseExtraVars(extraVars, CONFIG_VARIABLES);
  // What the start script and POSTCODE_EXTRA_VARS set wins over the files: a value of theirs that breaks its own
  // rule is refused before wrangler (seconds to load) reads the files.
  const ownLayers = [
    ['set by npm start', startVars],
    ['POSTCODE_EXTRA_VARS', extra.vars],
  ];
  const own = Object.assign({}, ...ownLayers.map(([, layer]) => layer));
  const ownSource = (name) => ownLayers.findLast(([, layer]) => name in layer)?.[0];
  const early = variableProblems(own).map(
    ({ variable, rule }) => `${variable} (${ownSource(variable.split('.')[0])}): ${rule}`,
  );
  if (extra.problems.length > 0 || early.length > 0) return { vars: own, problems: [...extra.problems, ...early] };
  const wrangler = await import('wrangler');
  const wranglerConfig = wrangler.unstable_readConfig({ config: `${root}/wrangler.toml` });
  const fileVars = wrangler.unstable_getVarsForDev(
    wranglerConfig.configPath,
    undefined,
    wranglerConfig.vars,
    undefined,
    true,
  );
  // Wrangler marks what .dev.vars gave (or overrode) as secret_text.
  const fromFile = (type) =>
    Object.fromEntries(
      Object.entries(fileVars)
        .filter(([, binding]) => (binding.type === 'secret_text') === (type === 'secret_text'))
        .map(([name, binding]) => [name, binding.value]),
    );
  const layers = [
    ['wrangler.toml', fromFile('plain_text')],
    ['.dev.vars', fromFile('secret_text')],
    ['set by npm start', startVars],
    ['POSTCODE_EXTRA_VARS', extra.vars],
  ];
  const vars = Object.assign({}, ...layers.map(([, layer]) => layer));
  const sourceOf = (name) => layers.findLast(([, layer]) => name in layer)?.[0] ?? 'unset';
  const problems = configProblems(vars).map(({ variable, rule }) => `${variable} (${sourceOf(variable)}): ${rule}`);
  return { vars: { ...startVars, ...extra.vars }, problems: [...extra.problems, ...problems] };
}
