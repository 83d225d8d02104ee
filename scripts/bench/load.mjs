// Load for the bench: autocannon runs under the noise guard, and single requests one after another.
import autocannon from 'autocannon';
import { cpuWindow } from './proc.mjs';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** Cores other processes may use during a measurement before it is taken again. */
export const FOREIGN_CORES_LIMIT = Number(process.env.BENCH_FOREIGN_CORES ?? 0.15);
const ATTEMPTS = 3;

export const log = (message) => process.stderr.write(`[bench] ${message}\n`);

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * One autocannon run, timed (`duration`) or counted (`amount`). The result also has `lastResponseAt`
 * (performance.now() of the last response): autocannon ends a counted run on its next one-second tick, so
 * its own end is up to a second after the work.
 */
export function autocannonRun(url, options) {
  return new Promise((resolvePromise, reject) => {
    const shape = options.amount ? {} : { duration: DURATION };
    let lastResponseAt = null;
    const instance = autocannon({ url, connections: CONNECTIONS, ...shape, ...options }, (error, result) =>
      error ? reject(error) : resolvePromise({ ...result, lastResponseAt }),
    );
    instance.on('response', () => {
      lastResponseAt = performance.now();
    });
  });
}

/**
 * One measurement of `target` ({ name, url, pid: the process group whose workerd runs it }), taken again
 * (at most three times) while processes the bench did not start use more than FOREIGN_CORES_LIMIT cores.
 * `makeOptions(attempt)` gives fresh request bodies for each attempt.
 */
export async function measure(target, makeOptions) {
  for (let attempt = 1; ; attempt++) {
    const options = makeOptions(attempt);
    const window = cpuWindow(target.pid);
    const startedAt = performance.now();
    const result = await autocannonRun(target.url, options);
    const cpu = window.stop();
    const requests = result['2xx'] + result.non2xx;
    // A counted run is timed to its last response (autocannon's own end waits for a whole second).
    const seconds = options.amount ? (result.lastResponseAt - startedAt) / 1000 : cpu.seconds;
    const figure = {
      rps: result['2xx'] / seconds,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.non2xx + result.errors + result.timeouts,
      cpuMsPerRequest: requests ? (cpu.workerCpuSeconds * 1000) / requests : null,
      foreignCores: cpu.foreignCores,
      repeated: attempt - 1,
    };
    const noisy = cpu.foreignCores > FOREIGN_CORES_LIMIT;
    log(
      `${target.name}: ${figure.rps.toFixed(0)} req/s, p50 ${figure.p50} ms, p99 ${figure.p99} ms, ` +
        `worker CPU ${figure.cpuMsPerRequest?.toFixed(2)} ms/req, other processes ${cpu.foreignCores.toFixed(2)} cores` +
        (noisy ? (attempt < ATTEMPTS ? ' - too busy, measuring again' : ' - still busy, kept') : ''),
    );
    if (!noisy || attempt >= ATTEMPTS) return figure;
  }
}

/** The median of each figure over rounds (the repeats and the noise summed and maxed). */
export function medianOf(figures) {
  const pick = (key) => median(figures.map((f) => f[key]).filter((v) => v !== null));
  return {
    rps: pick('rps'),
    p50: pick('p50'),
    p99: pick('p99'),
    cpuMsPerRequest: pick('cpuMsPerRequest'),
    errors: figures.reduce((sum, f) => sum + f.errors, 0),
    repeated: figures.reduce((sum, f) => sum + f.repeated, 0),
    maxForeignCores: Math.max(...figures.map((f) => f.foreignCores)),
  };
}

/**
 * `count` requests one after another on one connection: p50 and p99 in ms (0.01 ms resolution), and how many
 * were made: none is started after `until` (performance.now()), the first always is.
 * `request(i)` answers { path, method, headers, body }; `onBody(i, json)` sees each answer.
 */
export async function sequential(baseUrl, count, request, onBody, until = Number.POSITIVE_INFINITY) {
  const times = [];
  for (let i = 0; i < count && (i === 0 || performance.now() < until); i++) {
    const { path, method = 'GET', headers, body } = request(i);
    const started = performance.now();
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    times.push(performance.now() - started);
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    onBody?.(i, JSON.parse(text));
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p99: at(0.99), count: times.length };
}

/** Waits until the worker threads under `pid` are idle: the objects made by a send phase have settled. */
export async function settle(pids, maxSeconds = 30) {
  const deadline = Date.now() + maxSeconds * 1000;
  while (Date.now() < deadline) {
    const windows = pids.map((pid) => cpuWindow(pid));
    await new Promise((r) => setTimeout(r, 1000));
    const busiest = Math.max(...windows.map((w) => w.stop().workerCpuSeconds));
    if (busiest < 0.05) return;
  }
  log(`the Workers did not go idle within ${maxSeconds} s; measuring anyway`);
}
