/** The seven-line sandbox campaign every pipeline bench launches, built over the public API. */
export const SEVEN = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

/** One API call as a bearer of `token`; anything but a 2xx stops the bench. */
export async function callApi(baseUrl: string, token: string, path: string, method: string, body?: unknown): Promise<Body> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Body;
}

/** An approved seven-line sandbox campaign, ready to launch; returns its id. */
export async function approvedSevenLineCampaign(baseUrl: string, token: string, name: string): Promise<string> {
  const { campaign } = await callApi(baseUrl, token, '/api/v1/campaigns', 'POST', {
    name,
    clientName: 'Bench',
    startDate: '2027-01-01',
    endDate: '2027-01-31',
    budgetMinor: 7_000,
    maximumCommitmentMinor: 7_000,
    channels: SEVEN,
  });
  const lines = SEVEN.map((channel) => ({ channel, adapterKey: `sandbox-${channel}`, budgetMinor: 1_000 }));
  await callApi(baseUrl, token, `/api/v1/campaigns/${campaign.id}/plan`, 'PUT', { lines });
  await callApi(baseUrl, token, `/api/v1/campaigns/${campaign.id}/plan/approve`, 'POST', { expectedVersion: 1 });
  return campaign.id as string;
}
