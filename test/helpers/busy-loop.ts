/** Keeps the event loop busy for `ms`, as a crowd's requests would. */
export function busyLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
