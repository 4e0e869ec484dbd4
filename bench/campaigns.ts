import http from 'node:http';
import { MEDIA_FOR, SAMPLE, creativeBody } from '../test/support/creative-samples';

/** The seven-line sandbox campaign every pipeline bench launches, built over the public API. */
export const SEVEN = ['ctv', 'audio', 'tv', 'cinema', 'dooh', 'search', 'social'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

// Kept-alive connections, as a client that calls the API all day would keep them.
const agent = new http.Agent({ keepAlive: true });

/**
 * One API call as a bearer of `token`; anything but a 2xx stops the bench. On node:http rather
 * than fetch: the client shares the machine with the service it measures, and fetch spent
 * about a millisecond of CPU on each launch's call, as much as a tenth of the launch itself.
 */
export function callApi(baseUrl: string, token: string, path: string, method: string, body?: unknown): Promise<Body> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${path}`,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(payload === undefined ? {} : { 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode! >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
          else resolve(JSON.parse(text) as Body);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** One creative per channel over uploaded bytes, as an advertiser books them; made once per service and token. */
const creativesMade = new Map<string, Promise<Record<string, string>>>();
function sevenCreatives(baseUrl: string, token: string): Promise<Record<string, string>> {
  const key = `${baseUrl} ${token}`;
  let made = creativesMade.get(key);
  if (!made) {
    made = (async () => {
      const ids: Record<string, string> = {};
      for (const channel of SEVEN) {
        const contentType = MEDIA_FOR[channel]!;
        const res = await fetch(`${baseUrl}/api/v1/assets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
          body: SAMPLE[contentType](),
        });
        if (res.status !== 201) throw new Error(`POST /api/v1/assets: ${res.status} ${await res.text()}`);
        const { asset } = (await res.json()) as { asset: { url: string } };
        const { creative } = await callApi(baseUrl, token, '/api/v1/creatives', 'POST', creativeBody(channel, asset.url));
        ids[channel] = creative.id as string;
      }
      return ids;
    })();
    creativesMade.set(key, made);
  }
  return made;
}

/** An approved seven-line sandbox campaign, each line with its channel's creative, ready to launch; returns its id. */
export async function approvedSevenLineCampaign(baseUrl: string, token: string, name: string): Promise<string> {
  const creatives = await sevenCreatives(baseUrl, token);
  const { campaign } = await callApi(baseUrl, token, '/api/v1/campaigns', 'POST', {
    name,
    clientName: 'Bench',
    startDate: '2027-01-01',
    endDate: '2027-01-31',
    budgetMinor: 7_000,
    maximumCommitmentMinor: 7_000,
    channels: SEVEN,
  });
  const lines = SEVEN.map((channel) => ({
    channel,
    adapterKey: `sandbox-${channel}`,
    budgetMinor: 1_000,
    creativeIds: [creatives[channel]!],
  }));
  await callApi(baseUrl, token, `/api/v1/campaigns/${campaign.id}/plan`, 'PUT', { lines });
  await callApi(baseUrl, token, `/api/v1/campaigns/${campaign.id}/plan/approve`, 'POST', { expectedVersion: 1 });
  return campaign.id as string;
}
