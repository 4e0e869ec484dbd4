/** Rejects with `onTimeout()` when `p` has not settled within `ms`; the timer never outlives the race. */
export function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });
}

/** What a call with a deadline is told: when to send nothing more, and when to cut what is in flight. */
export interface CallDeadline {
  /** Aborted when the call's time is up: start no new request, no resend, no wait. */
  signal: AbortSignal;
  /** Aborted when a late answer is no longer waited for: cut the request in flight. */
  cut: AbortSignal;
}

export type DeadlineResult<T> = { kind: 'answered'; value: T } | { kind: 'timed-out'; late: Promise<T | null> };

/**
 * Runs `call` within `timeoutMs`. On time, its answer (or its error). Past it, the call is told to
 * stop (`signal`) and the caller moves on; what the call still answers within `lateMs` more comes
 * through `late` (null when it failed or was cut), so a slow supplier's answer is kept, not lost.
 */
export function withDeadline<T>(
  call: (deadline: CallDeadline) => Promise<T>,
  timeoutMs: number,
  lateMs: number,
): Promise<DeadlineResult<T>> {
  const stop = new AbortController();
  const cut = new AbortController();
  const running = call({ signal: stop.signal, cut: cut.signal });
  return new Promise<DeadlineResult<T>>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop.abort(new Error(`no answer within ${timeoutMs} ms`));
      let cutNow!: () => void;
      const cutDone = new Promise<null>((r) => (cutNow = () => r(null)));
      const cutTimer = setTimeout(() => {
        cut.abort(new Error(`no answer within ${timeoutMs + lateMs} ms`));
        cutNow();
      }, lateMs);
      // What settles once the request was cut is the cut's doing, not an answer; and a call that
      // does not settle when cut (a transport that keeps its request) is not waited for.
      const late = Promise.race([
        running.then(
          (v) => (cut.signal.aborted ? null : v),
          () => null,
        ),
        cutDone,
      ]);
      void late.finally(() => clearTimeout(cutTimer));
      resolve({ kind: 'timed-out', late });
    }, timeoutMs);
    running.then(
      (value) => (clearTimeout(timer), resolve({ kind: 'answered', value })),
      (err: unknown) => (clearTimeout(timer), reject(err)),
    );
  });
}
