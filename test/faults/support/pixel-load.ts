/** Pageviews posted one after another until stopped: when each was acknowledged, and what else came back. */
export function pixelLoad(url: string, pixelKey: string) {
  const acceptedAt: number[] = [];
  const other: number[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const res = await fetch(`${url}/api/v1/t/${pixelKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'outage', valueMinor: i }),
      }).catch(() => null);
      if (res?.status === 202) acceptedAt.push(Date.now());
      else other.push(res?.status ?? 0);
      await res?.arrayBuffer();
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    acceptedAt,
    other,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
