/** Waits until `condition` holds, checking every 20 ms; fails naming `what` after `timeoutMs`. */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
