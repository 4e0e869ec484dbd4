/** Polls until the check holds; workers, relays and schedules run asynchronously. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 25_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

/** Polls until the read gives something (not null), and gives it. */
export async function untilFound<T>(what: string, read: () => Promise<T | null>, timeoutMs = 25_000): Promise<T> {
  let found: T | null = null;
  await until(
    what,
    async () => {
      found = await read();
      return found !== null;
    },
    timeoutMs,
  );
  return found as T;
}
