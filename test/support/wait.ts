/** Polls until the check holds; workers, relays and schedules run asynchronously. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 25_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}
