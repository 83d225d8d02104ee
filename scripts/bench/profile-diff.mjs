// Where postcode spends more worker-thread CPU than its floor: two CPU profiles taken under the same load,
// each turned into milliseconds per answered request by frame, then compared. Frames are keyed by function
// name (JavaScript) or by the runtime's own name (native calls such as `exec`, `fetch`, `setAlarm`); the two
// bundles name their functions differently, so a row of one side only is a place to look, not a verdict.

/** Milliseconds per request by frame key (self time), and the total without idle. */
export function perRequest(profile, requests) {
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / profile.samples.length;
  const byKey = new Map();
  for (const node of profile.nodes) {
    const samples = counts.get(node.id);
    if (!samples) continue;
    const { url, functionName } = node.callFrame;
    const internal = url.startsWith('cloudflare-internal:') || url.startsWith('node-internal:');
    const key = internal ? url : `${functionName || '(anonymous)'}${url ? '' : ' (native)'}`;
    byKey.set(key, (byKey.get(key) ?? 0) + (samples * msPerSample) / requests);
  }
  let total = 0;
  for (const [key, ms] of byKey) if (key !== '(idle) (native)') total += ms;
  return { byKey, total };
}

/** A table of the frames whose cost differs most, postcode against the floor (ms per request). */
export function compareProfiles(endpoint, floor, rows = 30) {
  const keys = new Set([...endpoint.byKey.keys(), ...floor.byKey.keys()]);
  const diff = [...keys]
    .filter((key) => key !== '(idle) (native)')
    .map((key) => [key, endpoint.byKey.get(key) ?? 0, floor.byKey.get(key) ?? 0])
    .sort((a, b) => Math.abs(b[1] - b[2]) - Math.abs(a[1] - a[2]))
    .slice(0, rows);
  const ms = (v) => v.toFixed(3).padStart(7);
  const lines = [
    `worker-thread CPU per request (without idle): postcode ${endpoint.total.toFixed(2)} ms, floor ${floor.total.toFixed(2)} ms`,
    '',
    `${'postcode'.padStart(7)} ${'floor'.padStart(7)} ${'diff'.padStart(7)}  frame (ms per request, self time)`,
    ...diff.map(([key, a, b]) => `${ms(a)} ${ms(b)} ${ms(a - b)}  ${key}`),
  ];
  return lines.join('\n');
}
