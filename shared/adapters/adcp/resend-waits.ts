/** How long to wait before a resend (or a read asked again): the seller is busy, or was not reached. */
export const RESEND_DELAYS_MS = [250, 1_000, 2_000];

/** Waits before a resend; false when the call's time ran out meanwhile (nothing more may be sent). */
export const waitToResend = (ms: number, signal?: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve(true)), ms);
    const stop = () => (clearTimeout(timer), resolve(false));
    signal?.addEventListener('abort', stop, { once: true });
  });
