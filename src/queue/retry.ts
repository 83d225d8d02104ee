/** Growing delays between attempts: base, 3×, 9×, … (10 s, 30 s, 90 s, 270 s, 810 s by default), capped at 15 min. */
export function retryDelaySeconds(attempts: number, baseSeconds: number): number {
  return Math.min(baseSeconds * 3 ** Math.max(attempts - 1, 0), 900);
}
